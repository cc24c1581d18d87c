/** Structured JSON logs (pino): one object per line, ready for any log pipeline. */
import { pino, type DestinationStream, type Logger } from 'pino';
import { currentScope } from './request-scope.js';

export type { Logger };

/** `destination`: where lines go (stdout by default; tests capture them). */
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
  return destination ? pino(options, destination) : pino(options);
}
