/**
 * Reading and writing the JSON files the offline commands work on (cards, keys, key sets), with
 * one-line messages that say which file and what is wrong (`card.json:12:7: ...` for JSON
 * mistakes, as `validate` and `register` print them). A failure is a `LocalFileError` with the
 * exit code the commands return: 2 for a file that cannot be read or one in the way without
 * --force (as every command), 1 otherwise.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { FileTooLarge, inputName, readBounded } from './bounded-read.js';
import { JsonSource, JsonSyntaxError } from './json-source.js';
import { readProblem } from './document-kind.js';
import { EXIT_FAILED, EXIT_USAGE } from './output.js';

export class LocalFileError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILED,
    /** The --json error code, when not the one the exit code implies (READ_ERROR for 2, FILE_ERROR for 1). */
    readonly code?: 'USAGE' | 'TOO_LARGE' | 'NOT_JSON',
  ) {
    super(message);
  }
}

/**
 * Standard input can be read once: a command given two of its files as "-" (`sign - --key -`)
 * read the first from it and took the empty rest for the second, then complained about that
 * one. Said as a usage error before either is read.
 */
export function oneFromStdin(files: Record<string, string>): void {
  const fromStdin = Object.keys(files).filter((what) => files[what] === '-');
  if (fromStdin.length > 1) {
    throw new LocalFileError(`${fromStdin.join(' and ')} are both "-", standard input, which can be read only once: give one of them as a file`, EXIT_USAGE, 'USAGE');
  }
}

/** Parses a JSON file ("-": stdin) of at most a document's largest size; a UTF-8 byte order mark is tolerated. */
export async function readJsonFile(file: string): Promise<JsonSource> {
  let bytes: Buffer;
  try {
    bytes = await readBounded(file);
  } catch (err) {
    // The codes validate and register give the same file (they were FILE_ERROR here).
    if (err instanceof FileTooLarge) throw new LocalFileError(err.message, EXIT_FAILED, 'TOO_LARGE');
    throw new LocalFileError(readProblem(file, err), EXIT_USAGE);
  }
  try {
    return JsonSource.parse(inputName(file), bytes);
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new LocalFileError(err.message, EXIT_FAILED, 'NOT_JSON');
    throw err;
  }
}

/** Why a file could not be written, in words (the temporary file's name means nothing to the user). */
function writeProblem(file: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  const why: Record<string, string> = {
    ENOENT: `the folder ${path.dirname(file)} does not exist: create it first`,
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EISDIR: 'it is a folder: name a file',
    ENOSPC: 'no space left on the device',
    EDQUOT: 'disk quota exceeded',
    EFBIG: 'the file would be larger than this process may write (ulimit -f)',
    EROFS: 'read-only file system',
  };
  return `cannot write ${file}: ${(code && why[code]) ?? (err as Error).message}`;
}

/** A file in the way of one to be written, without --force: exit 2. */
const inTheWay = (file: string): LocalFileError => new LocalFileError(`${file} already exists; choose another file, or pass --force to replace it`, EXIT_USAGE, 'USAGE');

/**
 * A file written beside its target and synced, not yet in place: `commit` puts it there;
 * `revert`, after a commit, puts back what was there before (staged `revertible`) or removes the
 * file it made; `discard` removes what is left (the temporary file, the kept previous file).
 */
export interface StagedFile {
  commit(): Promise<void>;
  revert(): Promise<void>;
  discard(): Promise<void>;
}

/**
 * Writes `value` as indented JSON, whole or not at all: into a temporary file beside it, synced,
 * then renamed over the file (`overwrite`) or linked to its name, which fails when a file is
 * there. A failure part way (a full disk, a quota) leaves the file as it was: it may be the
 * user's only card (`sign card.json -o card.json`) or the key set with their other public keys.
 * `secret`: readable by the owner only (0600) from the start; otherwise a replaced file keeps
 * its mode. A symbolic link keeps pointing where it did: its target is replaced.
 */
export async function writeJsonFile(file: string, value: unknown, options: { secret?: boolean; overwrite?: boolean } = {}): Promise<void> {
  const staged = await stageJsonFile(file, value, options);
  try {
    await staged.commit();
  } finally {
    await staged.discard();
  }
}

/**
 * The first half of writeJsonFile: the temporary file written and synced, where a full disk or a
 * quota fails. Files that belong together (keygen's private key and key set) are all staged
 * before any is put in place, so that one that cannot be written changes none; one put in place
 * before another fails to be is reverted. `revertible`: a file the commit replaces is kept
 * (a second hard link) until discarded, so that `revert` can put it back.
 */
export async function stageJsonFile(file: string, value: unknown, options: { secret?: boolean; overwrite?: boolean; revertible?: boolean } = {}): Promise<StagedFile> {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  const target = options.overwrite ? await fs.realpath(file).catch(() => file) : file;
  const existing = await fs.stat(target).catch(() => undefined);
  // What is in the way is fixed on the command line (another name, --force): a usage error, as
  // for backup (README's exit status table).
  if (existing?.isDirectory()) throw new LocalFileError(`cannot write ${file}: it is a folder: name a file`, EXIT_USAGE, 'USAGE');
  if (existing && !options.overwrite) throw inTheWay(file);
  const mode = options.secret ? 0o600 : existing ? existing.mode & 0o777 : 0o644;
  const temporary = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  /** The file a commit replaced, kept under a second name until discarded: `revert` renames it back. */
  const previous = `${temporary}.previous`;
  /** After a commit, what `revert` does: rename the previous file back, or remove the one made ('none'). */
  let kept: 'previous' | 'none' | undefined;
  /** A revert that could not rename the previous file back: it stays where it is, the only copy. */
  let stranded = false;
  const discard = async (): Promise<void> => {
    await fs.rm(temporary, { force: true });
    if (!stranded) await fs.rm(previous, { force: true });
  };
  const named = (err: unknown): LocalFileError => {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return inTheWay(file);
    return new LocalFileError(writeProblem(file, err));
  };
  try {
    const handle = await fs.open(temporary, 'wx', mode);
    try {
      await handle.writeFile(text);
      await handle.chmod(mode); // the mode asked for, whatever the umask
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    await discard();
    throw named(err);
  }
  const commit = async (): Promise<void> => {
    try {
      if (options.overwrite) {
        if (options.revertible) kept = (await keepCopy(target, previous)) ? 'previous' : 'none';
        await fs.rename(temporary, target);
      } else {
        await fs.link(temporary, target).catch((err: NodeJS.ErrnoException) => {
          // A file system without hard links (some network and FUSE mounts): a copy that refuses an existing name.
          if (err.code !== 'EPERM' && err.code !== 'ENOTSUP' && err.code !== 'EOPNOTSUPP') throw err;
          return fs.copyFile(temporary, target, fsConstants.COPYFILE_EXCL);
        });
        kept = 'none';
      }
    } catch (err) {
      kept = undefined;
      throw named(err);
    }
  };
  const revert = async (): Promise<void> => {
    const was = kept;
    kept = undefined;
    if (was === 'none') await fs.rm(target, { force: true });
    if (was !== 'previous') return;
    await fs.rename(previous, target).catch((err: unknown) => {
      stranded = true;
      throw new LocalFileError(`${writeProblem(file, err)}; what it held before is in ${previous}: move it back`);
    });
  };
  return { commit, revert, discard };
}

/**
 * A second name for `file` (a hard link; a copy where the file system has none), so a commit
 * that replaces it can be undone. False when there is no file to keep.
 */
async function keepCopy(file: string, copy: string): Promise<boolean> {
  try {
    await fs.link(file, copy);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
    await fs.copyFile(file, copy, fsConstants.COPYFILE_EXCL);
    return true;
  }
}
