/**
 * A database file that cannot be opened for writing, told in the terms an operator fixes. The
 * driver's words ("unable to open database file") name neither the file nor the setting, and the
 * process may be `a2a-registry import` run by another user than the registry's: the error names
 * this process's user, and the path and access it lacks where that can be found. A module of its
 * own: a start checks its data directory with it before the server's modules load
 * (composition/start-checks.ts).
 */
import { dirname } from 'node:path';
import { thisProcessUser, whyCannotWrite } from '../../lib/write-access.js';

/** Opening failures that mean the data directory or the file is not writable (or not a directory). */
const CANNOT_WRITE_HERE = /EACCES|EPERM|EROFS|EEXIST|ENOTDIR|EISDIR|ENOENT|unable to open database file|readonly database/i;

/** The error for `file` when `error`, from opening it, means it cannot be written where it is; undefined otherwise. */
export function cannotWriteDatabase(file: string, error: unknown): Error | undefined {
  const message = error instanceof Error ? error.message : String(error);
  if (!CANNOT_WRITE_HERE.test(`${(error as NodeJS.ErrnoException).code ?? ''} ${message}`)) return undefined;
  const why = whyCannotWrite(file, [`${file}-wal`, `${file}-shm`, `${file}.lock`]);
  return new Error(
    `cannot open the database file ${file} for writing (${message})${why ? `: ${why}` : ''}. Check that REGISTRY_DATA_DIR (${dirname(file)}) is a directory ` +
      `that ${thisProcessUser()} can write to, and that the files in it are writable too.`,
    { cause: error },
  );
}
