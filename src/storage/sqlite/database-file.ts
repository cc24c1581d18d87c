/**
 * Whether a file a command is given (a backup to restore, the database to back up or migrate)
 * can be an SQLite database at all, seen before SQLite opens it: SQLite reads a device
 * (/dev/zero, /dev/null) or an empty file as an empty database, which was then called "an SQLite
 * database but not a registry's", and a folder as "disk I/O error". One rule for backup, restore
 * and migrate, so each names what a wrong file is in the same words.
 */
import fs from 'node:fs';

/** The kind of a file system object that is not a regular file, for a message. */
function kindOf(stat: fs.Stats): string {
  if (stat.isDirectory()) return 'a folder';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isFIFO()) return 'a pipe';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** The first bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

export interface NotADatabase {
  /** "<file> is empty (0 bytes), not a backup: give the file a2a-registry backup wrote" */
  message: string;
  /**
   * A folder: it cannot be read as a file at all, a usage error (as validate's "cannot read
   * <dir>: is a directory"); anything else was read and is the wrong file.
   */
  folder: boolean;
}

/**
 * Why `file` (which exists) cannot be `wanted` ("a backup", "a registry database"), or
 * undefined when it is a regular file that begins as an SQLite database; `fix` ends the message,
 * `emptyFix` that of an empty file when it has more to say (restore: a failed repair leaves one).
 */
export function whyNotAnSqliteDatabase(file: string, wanted: string, fix: string, emptyFix = fix): NotADatabase | undefined {
  const stat = fs.statSync(file);
  if (!stat.isFile()) return { message: `${file} is ${kindOf(stat)}, not ${wanted}: ${fix}`, folder: stat.isDirectory() };
  if (stat.size === 0) return { message: `${file} is empty (0 bytes), not ${wanted}: ${emptyFix}`, folder: false };
  const head = Buffer.alloc(SQLITE_HEADER.length);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (!head.equals(SQLITE_HEADER)) {
    return { message: `${file} is not an SQLite database (it does not begin with "SQLite format 3"), so not ${wanted}: ${fix}`, folder: false };
  }
  return undefined;
}

/**
 * Why the registry's own database file `file` (which exists) is no SQLite database at all: a text
 * file, its header overwritten, emptied. One wording for `a2a-registry check` and `import`: the
 * import called a text file damaged and blamed the disk, where check said what it is.
 */
export function whyNotTheRegistryDatabase(file: string): NotADatabase | undefined {
  return whyNotAnSqliteDatabase(file, 'a registry database', 'restore it from a backup (a2a-registry restore --force <backup>)');
}
