/**
 * Temporary files written beside the database and renamed into place when done: a restore's copy
 * of the backup (`registry.db.restore-<pid>.tmp`, backup.ts) and a database re-created from the
 * open connection (`registry.db.restoring-<pid>`, store.ts). A process killed half way (or a
 * machine losing power) leaves one behind, as large as the database, and nothing else would ever
 * remove it. Whoever takes the database's process lock (a registry starting, a restore) removes
 * those whose process is gone; a backup, those of earlier backups to the same file
 * (`<backup>.<pid>.tmp`).
 */
import fs from 'node:fs';
import path from 'node:path';

const escape = (name: string): string => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `<database>.restore-<pid>.tmp` and `<database>.restoring-<pid>`, with any -journal or -wal SQLite gave them. */
function temporaryPattern(database: string): RegExp {
  return new RegExp(`^${escape(path.basename(database))}\\.(?:restore-(\\d+)\\.tmp|restoring-(\\d+))(?:-journal|-wal|-shm)?$`);
}

/**
 * Whether the process `pid` may still be writing its file. Our own pid is a previous process's
 * (one restarted in a container gets the same pid): this one has not written any yet.
 */
function alive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, run by another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the temporary files beside `database` whose process is gone; returns their paths. */
export function removeStaleTemporaries(database: string): string[] {
  return removeStale(path.dirname(database), temporaryPattern(database));
}

/**
 * Removes the copies a backup to `destination` killed half way left beside it
 * (`<destination>.<pid>.tmp`, backup.ts) whose process is gone; returns their paths.
 */
export function removeStaleBackupCopies(destination: string): string[] {
  return removeStale(path.dirname(destination), new RegExp(`^${escape(path.basename(destination))}\\.(\\d+)\\.tmp(?:-journal)?$`));
}

/** The files in `dir` whose name matches `pattern` (the first group that matched is a pid) and whose process is gone. */
function removeStale(dir: string, pattern: RegExp): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return []; // no directory yet: nothing left behind
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = pattern.exec(name);
    if (!match || alive(Number(match[1] ?? match[2]))) continue;
    const file = path.join(dir, name);
    try {
      fs.rmSync(file, { force: true });
      removed.push(file);
    } catch {
      // Not ours to remove (permissions): left for the operator; the database is unaffected.
    }
  }
  return removed;
}
