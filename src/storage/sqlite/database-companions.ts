/**
 * The files a running registry's SQLite database is made of: the database, its write-ahead log
 * and shared memory (WAL mode), a rollback journal (left by a crash outside WAL mode), and the
 * process lock and the import lock beside it (./process-lock.ts), the record of its damage (./damage-record.ts) and of a restore under way (./restore-swap.ts). A backup written over one of them (`backup --force
 * registry.db-wal`) lost acknowledged writes at the next crash (the log replaced), or let a
 * second registry start on the same directory (the lock replaced); each is refused by name.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DAMAGE_RECORD_SUFFIX } from './damage-record.js';
import { RESTORE_RECORD_SUFFIX } from './restore-swap.js';

const COMPANIONS: readonly { suffix: string; role: string }[] = [
  { suffix: '', role: 'the database itself' },
  { suffix: '-wal', role: "the database's write-ahead log (its latest commits)" },
  { suffix: '-shm', role: "the database's shared-memory index of its write-ahead log" },
  { suffix: '-journal', role: "the database's rollback journal" },
  { suffix: '.lock', role: "the registry's process lock (it keeps a second registry off the database)" },
  { suffix: '.import-lock', role: 'the lock imports hold while they write (it keeps a restore off the database)' },
  { suffix: RESTORE_RECORD_SUFFIX, role: 'the record of a restore putting its copy in place (the registry finishes it from there after a crash)' },
  { suffix: DAMAGE_RECORD_SUFFIX, role: "the registry's record that the database was found damaged (it keeps a restart from writing into it)" },
];

/** The path with its folder's links resolved (the file itself need not exist). */
function realLocation(file: string): string {
  const absolute = path.resolve(file);
  try {
    return path.join(fs.realpathSync(path.dirname(absolute)), path.basename(absolute));
  } catch {
    return absolute;
  }
}

/** A file's status, or undefined where there is none or it may not be looked at (the command's own checks say why). */
function statusOf(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}

/** The same file (through hard or symbolic links), where both exist. */
function sameInode(a: string, b: string): boolean {
  const sa = statusOf(a);
  const sb = statusOf(b);
  return sa !== undefined && sb !== undefined && sa.dev === sb.dev && sa.ino === sb.ino;
}

/**
 * What `candidate` is to the SQLite database `database` ("the database's write-ahead log ..."),
 * or undefined when it is none of its files: compared by name (a -shm not there yet is still
 * the one SQLite would open) and, where both exist, by inode (a link to one).
 */
export function roleInDatabase(candidate: string, database: string): string | undefined {
  const where = realLocation(candidate);
  const base = realLocation(database);
  for (const { suffix, role } of COMPANIONS) {
    if (where === `${base}${suffix}` || sameInode(candidate, `${database}${suffix}`)) return role;
  }
  return undefined;
}

/** The database `file` belongs to, by its name (registry.db-wal: registry.db), with its role, when that database exists. */
export function companionOf(file: string): { database: string; role: string } | undefined {
  for (const { suffix, role } of COMPANIONS) {
    if (suffix === '' || !file.endsWith(suffix)) continue;
    const database = file.slice(0, -suffix.length);
    if (statusOf(database)?.isFile()) return { database, role };
  }
  return undefined;
}
