/** Heap figures for tests: a full garbage collection, and the heap in use after one. */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// The flag exposes gc to contexts made after it.
setFlagsFromString('--expose-gc');
export const gc = runInNewContext('gc') as () => void;

/** The heap in use once garbage is collected (twice: what one collection frees may free more). */
export function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
