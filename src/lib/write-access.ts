/**
 * Why a file cannot be written where it is to be kept (the SQLite database, the admin token), or
 * read (a database to back up), in the terms an operator fixes: the path, the user, and the
 * access that user lacks. The process
 * may be the registry or `a2a-registry import`/`backup`/... run by someone else than the user the
 * registry runs as, so the user named is this process's own. Only called once opening failed:
 * the few system calls it makes cost nothing on the paths that work.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** This process's user, as `user alice (uid 1000)`, or `uid 1000` where it has no name. */
export function thisProcessUser(): string {
  const uid = process.getuid?.();
  let name: string | undefined;
  try {
    name = os.userInfo().username;
  } catch {
    // A uid with no passwd entry (containers run with --user 12345): the uid alone.
  }
  if (uid === undefined) return name ? `user ${name}` : 'this process\'s user';
  return name ? `user ${name} (uid ${uid})` : `uid ${uid}`;
}

/**
 * The first thing that stops this process writing `file` and the files SQLite keeps beside it
 * (`-wal`, `-shm`, made in its directory): a path in the way that is not a directory, a
 * directory it may not enter or create files in, a read-only file system, an existing file it
 * may not write, a directory where the file should be. Undefined when none of these is found (the caller's own error then stands).
 */
export function whyCannotWrite(file: string, besides: readonly string[] = []): string | undefined {
  const dir = path.dirname(path.resolve(file));
  // The nearest part of the directory's path that exists: what is missing below it must be made in it.
  let existing = dir;
  let stat: fs.Stats | undefined;
  for (;;) {
    try {
      stat = fs.statSync(existing, { throwIfNoEntry: false });
    } catch {
      // EACCES: a directory above it this user may not enter (the data directory under a
      // parent of mode 0700). Throwing here replaced the start's whole message with a bare
      // "EACCES: permission denied, stat": the directory on the way that stops it is said instead.
      for (const ancestor of ancestorsOf(path.dirname(existing))) {
        const missing = lacking(ancestor, fs.constants.X_OK, 'enter the directory');
        if (missing) return missing;
      }
      return undefined;
    }
    if (stat || path.dirname(existing) === existing) break;
    existing = path.dirname(existing);
  }
  if (!stat) return undefined;
  if (!stat.isDirectory()) return `${existing} is a file, not a directory`;
  // Every directory on the way must be enterable (search permission) before anything in it can be reached.
  for (const ancestor of ancestorsOf(existing)) {
    const missing = lacking(ancestor, fs.constants.X_OK, 'enter the directory');
    if (missing) return missing;
  }
  if (existing !== dir) return lacking(existing, fs.constants.W_OK, 'create directories in');
  const inDir = lacking(dir, fs.constants.W_OK, 'create files in');
  if (inDir) return inDir;
  for (const name of [file, ...besides]) {
    if (!fs.existsSync(name)) continue;
    // What Docker makes of a bind mount of a file the host does not have (-v ./registry.db:/data/registry.db):
    // the start said only "EISDIR: illegal operation on a directory".
    if (fs.statSync(name).isDirectory()) return `${name} is a directory, not a file (as docker run -v makes for a host file that does not exist): move it aside`;
    const missing = lacking(name, fs.constants.R_OK | fs.constants.W_OK, 'read and write');
    if (missing) return missing;
  }
  return undefined;
}

/**
 * What stops this process reading `file`: a directory on the way it may not enter, or the file
 * itself. Undefined when neither (a missing file included: `fs.existsSync` says false for a file
 * behind a directory this user may not enter, which is not the same mistake).
 */
export function whyCannotRead(file: string): string | undefined {
  const resolved = path.resolve(file);
  for (const ancestor of ancestorsOf(path.dirname(resolved))) {
    const missing = lacking(ancestor, fs.constants.X_OK, 'enter the directory');
    if (missing) return missing;
  }
  return lacking(resolved, fs.constants.R_OK, 'read');
}

/** `/a/b/c` → `/`, `/a`, `/a/b`, `/a/b/c`. */
function ancestorsOf(dir: string): string[] {
  const all: string[] = [];
  for (let at = dir; ; at = path.dirname(at)) {
    all.unshift(at);
    if (path.dirname(at) === at) return all;
  }
}

/** What this process may not do to `target` (`access(2)` with `mode`), said with who owns it and its mode. */
function lacking(target: string, mode: number, action: string): string | undefined {
  try {
    fs.accessSync(target, mode);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return `${target} is on a read-only file system`;
    if (code !== 'EACCES' && code !== 'EPERM') return undefined;
    const stat = fs.statSync(target, { throwIfNoEntry: false });
    const owner = stat ? ` (owned by uid ${stat.uid}, mode ${(stat.mode & 0o7777).toString(8).padStart(4, '0')})` : '';
    return `${thisProcessUser()} may not ${action} ${target}${owner}`;
  }
}
