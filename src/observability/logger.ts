/** Structured JSON logs (pino): one object per line, ready for any log pipeline. */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'a2a-registry' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Tokens never reach the logs, whatever a caller sends.
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'token'], censor: '[redacted]' },
  });
}
