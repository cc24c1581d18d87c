/** Structured JSON logs (pino): one object per line, ready for any log pipeline. */
import { pino, type DestinationStream, type Logger } from 'pino';
import { LogDestination, lossReason, stdoutDestination } from './log-destination.js';
import { currentScope, outsideScope } from './request-scope.js';

export type { Logger };

/** `destination`: where lines go (standard output by default, through ./log-destination.ts; tests capture them). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'a2a-registry' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Every line written while serving a request carries its id (X-Request-Id), wherever it is logged from.
    mixin: () => {
      const scope = currentScope();
      return scope ? { requestId: scope.requestId } : {};
    },
    // Tokens never reach the logs, whatever a caller sends.
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'token'], censor: '[redacted]' },
  };
  if (destination) return pino(options, destination);
  // Not pino's default (sonic-boom), which a failed write (a full disk) left hanging for good.
  const stdout = stdoutDestination();
  const log = pino(options, stdout);
  // The process's logger (the last made, where tests make several) tells the loss once the log takes lines again.
  // Outside the scope of the request whose line happened to be written first: the loss is not about it.
  stdout.onRecovered = (loss) =>
    outsideScope(() =>
      log.warn(
        { lostLines: loss.lines, since: loss.since.toISOString(), reason: loss.reason },
        `${loss.lines} log line${loss.lines === 1 ? ' was' : 's were'} lost: the log could not be written (${lossReason(loss.reason)}) from ${loss.since.toISOString()} until now`,
      ),
    );
  return log;
}

/** Lines this logger's destination dropped because they could not be written (undefined: a destination that does not count them). */
export function lostLogLines(log: Logger): number | undefined {
  const stream = (log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  return stream instanceof LogDestination ? stream.lostLines : undefined;
}
