/**
 * Timers made while this process served a request that are still pending once it has answered.
 * A timer holds the async context it was made in (the request's scope, the request and its body
 * among it) until it fires or is cleared, so a bound left to run its whole time after the work it
 * bounded ended (AbortSignal.timeout's: nothing clears it) kept the request that long after the
 * answer. Followed with an async hook, in this process: the registry must run in it
 * (startTestRegistry). process.getActiveResourcesInfo() does not do: it leaves out unref'd
 * timers, as every bound's is.
 */
import { createHook } from 'node:async_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { currentScope } from '../../src/observability/request-scope.js';

export interface RequestTimers {
  /**
   * How many timers of `delayMs` made in a request's scope since following began have neither
   * fired nor been cleared. By their delay: the HTTP server's keep-alive timer of the connection
   * and undici's of a pooled one are made in the scope too, and stay while it is idle.
   */
  pending(delayMs: number): Promise<number>;
  stop(): void;
}

export function followRequestTimers(): RequestTimers {
  const made = new Map<number, number>();
  const hook = createHook({
    init(asyncId, type, _trigger, resource) {
      // _idleTimeout: a Timeout's delay (no public getter; the name has not changed since Node.js 0.x).
      if (type === 'Timeout' && currentScope()) made.set(asyncId, (resource as { _idleTimeout?: number })._idleTimeout ?? Number.NaN);
    },
    destroy(asyncId) {
      made.delete(asyncId);
    },
  }).enable();
  return {
    async pending(delayMs) {
      // Destroy hooks run from a queue emptied once the loop turns.
      await nextTurn();
      await nextTurn();
      return [...made.values()].filter((ms) => ms === delayMs).length;
    },
    stop: () => void hook.disable(),
  };
}
