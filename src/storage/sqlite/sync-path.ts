/**
 * fsync of a file or a folder by its path: a folder's, so that renames and removals in it outlive
 * a power loss. Its own module so that the store (./store.ts), its damage record, and a restore's swap
 * (./restore-swap.ts) use it without importing the backup's steps, which import the store.
 */
import fs from 'node:fs';

/** fsyncs `file` (a folder too, opened 'r'), opened with `flags`. */
export function syncPath(file: string, flags: string): void {
  const fd = fs.openSync(file, flags);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
