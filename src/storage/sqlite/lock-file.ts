/**
 * The lock files beside a SQLite database (./process-lock.ts), made before they are locked: what
 * opening the database writes first, and so what a start checks its data directory with before
 * the server's modules load (composition/start-checks.ts). A module of its own, without
 * better-sqlite3: those checks run for PostgreSQL deployments too, which have no use for it.
 */
import { closeSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeDirectories } from '../../lib/make-directories.js';

/** The file whose lock keeps a second registry off the database (./process-lock.ts). */
export const processLockFile = (file: string): string => `${file}.lock`;

/**
 * Makes `lockFile`, a lock beside the database `file`, if missing (the user's alone), and the
 * database's directory with it.
 */
export function makeLockFile(file: string, lockFile = processLockFile(file)): void {
  makeDirectories(dirname(file), 0o700);
  closeSync(openSync(lockFile, 'a', 0o600));
}
