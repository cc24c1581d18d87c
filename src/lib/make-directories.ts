/**
 * `mkdir -p` that always ends. Node's `mkdirSync(dir, {recursive: true})` loops for ever when
 * mkdir fails with ENOENT although the parent exists, as under /proc (REGISTRY_DATA_DIR=/proc/x
 * hung start-up with no word). Here each missing directory is made on its own, from the top, and
 * the first one that cannot be made throws the file system's error (ENOENT, EACCES, EROFS, EPERM,
 * EEXIST for a file in the way): the caller says which setting it came from and how to fix it.
 * Returns the directories it made, from the top (a start refused undoes them: start-checks.ts).
 */
import fs from 'node:fs';
import path from 'node:path';

export function makeDirectories(dir: string, mode: number): string[] {
  const missing: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(at);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (stat?.isDirectory()) break;
    // A file where a directory belongs: mkdir says so (EEXIST), as the recursive form did.
    missing.push(at);
    if (stat || path.dirname(at) === at) break;
  }
  const made: string[] = [];
  for (const at of missing.reverse()) {
    try {
      fs.mkdirSync(at, { mode });
      made.push(at);
    } catch (error) {
      // Made meanwhile by another process starting on the same directory.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && fs.statSync(at, { throwIfNoEntry: false })?.isDirectory()) continue;
      throw error;
    }
  }
  return made;
}
