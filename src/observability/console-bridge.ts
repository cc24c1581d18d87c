/**
 * The A2A SDK reports some failures with console.error/console.warn (a broken stream, an event
 * loop failure), as multi-line text with stack traces. In a process whose logs are JSON lines,
 * those lines break parsers and carry no request id. The bridge sends them through the logger
 * instead: one JSON line each, with the request id of the request being served (logger mixin).
 * Installed by `npm start` only; tests keep the real console.
 */
import { format } from 'node:util';
import type { Logger } from './logger.js';

export function bridgeConsole(log: Logger): void {
  console.error = (...args: unknown[]) => log.error({ source: 'console' }, format(...args));
  console.warn = (...args: unknown[]) => log.warn({ source: 'console' }, format(...args));
}
