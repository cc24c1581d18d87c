/**
 * The lock files beside a SQLite database (./process-lock.ts), made before they are locked: what
 * opening the database writes first, and so what a start checks its data directory with before
 * the server's modules load (composition/start-checks.ts). A module of its own, without
 * better-sqlite3: those checks run for PostgreSQL deployments too, which have no use for it.
 */
import { closeSync, fstatSync, openSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeDirectories } from '../../lib/make-directories.js';

/** The file whose lock keeps a second registry off the database (./process-lock.ts). */
export const processLockFile = (file: string): string => `${file}.lock`;

/** What makeLockFile made: the directories (from the top) and the lock file, if they were missing. */
export interface MadeLockFile {
  directories: string[];
  lockFile?: { path: string; dev: number; ino: number };
}

/**
 * Makes `lockFile`, a lock beside the database `file`, if missing (the user's alone), and the
 * database's directory with it; what it made.
 */
export function makeLockFile(file: string, lockFile = processLockFile(file)): MadeLockFile {
  const directories = makeDirectories(dirname(file), 0o700);
  let fd: number;
  let made = true;
  try {
    fd = openSync(lockFile, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // There already (another start's, or one left by an earlier run): opened as writing it would be.
    made = false;
    fd = openSync(lockFile, 'a', 0o600);
  }
  try {
    const { dev, ino } = fstatSync(fd);
    return { directories, lockFile: made ? { path: lockFile, dev, ino } : undefined };
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes what makeLockFile made, for a start refused before it opened the database (PORT in
 * use): an operator who mistyped a setting found a new, empty data directory. Only that: the lock
 * file if it is still the one made and still empty (a process that takes the lock writes to it
 * at once, so one held by another registry started meanwhile is never empty), then the
 * directories made, deepest first, each only while empty (rmdir), stopping at the first that is
 * not. Best effort: what cannot be removed stays, as it would have.
 */
export function removeMadeLockFile(made: MadeLockFile): void {
  try {
    const lock = made.lockFile;
    if (lock) {
      const now = statSync(lock.path, { throwIfNoEntry: false });
      if (now?.dev === lock.dev && now.ino === lock.ino && now.size === 0) unlinkSync(lock.path);
    }
    for (const dir of [...made.directories].reverse()) rmdirSync(dir);
  } catch {
    // Not empty (the database written there meanwhile), or no longer ours to remove: it stays.
  }
}
