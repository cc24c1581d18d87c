/**
 * The A2A SDK reports some failures with console.error/console.warn (a broken stream, an event
 * loop failure), as multi-line text with stack traces. In a process whose logs are JSON lines,
 * those lines break parsers and carry no request id. The bridge sends them through the logger
 * instead: one JSON line each, with the request id of the request being served (logger mixin).
 *
 * The SDK also logs clients' mistakes that way (SubscribeToTask on an unknown task is a
 * "Pre-stream error" with a stack): an SDK error that names a client mistake is logged at info,
 * and storage being unavailable at warn, with its message and no stack. Only what may be a bug
 * stays an error with its stack. Installed by `npm start` only; tests keep the real console.
 */
import { format } from 'node:util';
import type { Logger } from './logger.js';

/** SDK error names (A2AError subclasses) that describe what the client asked for, not a fault. */
const CLIENT_MISTAKES = new Set([
  'TaskNotFoundError',
  'TaskNotCancelableError',
  'PushNotificationNotSupportedError',
  'UnsupportedOperationError',
  'ContentTypeNotSupportedError',
  'ExtendedAgentCardNotConfiguredError',
  'ExtensionSupportRequiredError',
  'VersionNotSupportedError',
  'RequestMalformedError',
]);
/** Faults of the environment that are reported elsewhere (/readyz, the storage probe). */
const KNOWN_FAULTS = new Set(['StorageUnavailableError']);

/** The SDK's A2AError among the arguments, by its name (the class may come from any SDK bundle). */
function sdkError(args: unknown[]): Error | undefined {
  return args.find((a): a is Error => a instanceof Error && (CLIENT_MISTAKES.has(a.name) || KNOWN_FAULTS.has(a.name)));
}

/** The text of the arguments with errors reduced to their name and message. */
const withoutStacks = (args: unknown[]): string => args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : typeof a === 'string' ? a : format(a))).join(' ');

export function bridgeConsole(log: Logger): void {
  const report = (level: 'error' | 'warn', args: unknown[]) => {
    const known = sdkError(args);
    if (!known) return log[level]({ source: 'console' }, format(...args));
    if (KNOWN_FAULTS.has(known.name)) return log.warn({ source: 'console' }, withoutStacks(args));
    return log.info({ source: 'console' }, withoutStacks(args));
  };
  console.error = (...args: unknown[]) => report('error', args);
  console.warn = (...args: unknown[]) => report('warn', args);
}
