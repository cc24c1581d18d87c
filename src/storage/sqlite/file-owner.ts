/**
 * Files an operator's command creates beside the registry's database when run as root (`sudo
 * a2a-registry restore`, `sudo a2a-registry import`), while the registry runs as its own user.
 * Created as root's, with mode 0600, the registry's user could not open them: a restored
 * registry.db or one an import created stopped the registry's start ("user a2a may not read and
 * write registry.db (owned by uid 0)"), and an import lock made by root stopped every later
 * import run as that user. They are given to the owner of the database, or of its directory
 * when there is no database yet: the registry's user.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface FileOwner {
  uid: number;
  gid: number;
}

/**
 * Whom files created beside `database` must belong to: undefined unless this process runs as
 * root (anyone else's files are its own, and it may not give them away) and the database or its
 * directory is there to tell.
 */
export function ownerForNewFiles(database: string): FileOwner | undefined {
  if (process.geteuid?.() !== 0) return undefined;
  const stat = fs.statSync(database, { throwIfNoEntry: false }) ?? fs.statSync(path.dirname(database), { throwIfNoEntry: false });
  return stat && { uid: stat.uid, gid: stat.gid };
}

/** Gives `files` (those that exist) to `owner`, if any. */
export function giveTo(owner: FileOwner | undefined, files: readonly string[]): void {
  if (!owner) return;
  for (const file of files) {
    try {
      fs.chownSync(file, owner.uid, owner.gid);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Gone meanwhile (a -wal SQLite removed), or root without the right to (an NFS export
      // squashing root): left as before; the registry's start names a file it may not open.
      if (code !== 'ENOENT' && code !== 'EPERM') throw err;
    }
  }
}
