/**
 * The documents `a2a-registry import` reads, one at a time (bounded memory however large the
 * input): a directory (every *.json file in it and below, one document each, and every
 * *.jsonl / *.ndjson file), a JSON file (one document), a JSON-lines file (one document per
 * non-empty line), or "-" (JSON lines on standard input). Files come in name order, so an
 * import is repeatable.
 *
 * A document longer than `maxBytes` is never read into memory: it is handed on as `tooLong`, to
 * be refused with its place like any other document, and the import goes on with the next one.
 */
import { constants, createReadStream, type Stats } from 'node:fs';
import { access, readdir, readlink, stat } from 'node:fs/promises';
import { FileTooLarge, inputName, readBounded } from './bounded-read.js';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { readProblem } from './document-kind.js';
import { boundedLines } from './json-lines.js';
import { whereNotUtf8, type NotUtf8 } from './utf8-text.js';

/** One document as read: its text, and where it is (a JSON-lines document has its line). */
export interface SourceDocument {
  file: string;
  /** 1-based line of a JSON-lines document; absent for a whole-file document. */
  line?: number;
  text: string;
  /** Its size as the registry measures an uploaded file: the bytes. */
  bytes: number;
  /** Set when the document is longer than this many bytes: its text (empty) was not read. */
  tooLong?: number;
  /** Set when its bytes are not UTF-8: refused as not JSON, as the registry refuses such an upload. */
  notUtf8?: NotUtf8;
  /**
   * Set for a JSON-lines source whose first line is "{" or "[" alone: pretty-printed JSON, not
   * one document per line. It stands for the whole source (its text empty), which is not read on.
   */
  notJsonLines?: '{' | '[';
  /**
   * Set for a JSON-lines source (standard input, *.jsonl) that held no document: nothing at all,
   * or blank lines only. It stands for the whole source (its text empty). An empty *.json file is
   * refused as not JSON; an empty *.jsonl file was read as 0 documents, exit 0, though an empty
   * input is almost always a mistake (a wrong path, an export that failed).
   */
  noDocuments?: 'empty' | 'blank';
}

const isJsonLines = (file: string): boolean => /\.(jsonl|ndjson)$/i.test(file);
const isImportable = (file: string): boolean => /\.json$/i.test(file) || isJsonLines(file);

/** A source that cannot be read: a usage mistake, found before anything is imported. */
export class SourceError extends Error {}

/**
 * Checks every source up front and lists the files to read (directories expanded). A file
 * reached by more than one path (named twice, named and inside a directory also given, a hard
 * link, a symbolic link to it) is read once, under its first path: files are told apart by
 * device and inode, which no spelling of a path changes.
 */
export async function listSources(sources: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  const add = (file: string, info: Stats): void => {
    const id = `${info.dev}:${info.ino}`;
    if (seen.has(id)) return;
    seen.add(id);
    files.push(file);
  };
  // What is named itself, not found in a directory: a pipe (or device) named is read, wherever
  // a directory given beside it holds it too.
  const named = new Set<string>();
  for (const source of sources) {
    const info = source === '-' ? undefined : await stat(source).catch(() => undefined);
    if (info && !info.isDirectory()) named.add(`${info.dev}:${info.ino}`);
  }
  for (const source of sources) {
    if (source === '-') {
      files.push(source);
      continue;
    }
    let info;
    try {
      info = await stat(source);
    } catch (err) {
      throw await unreadable(source, err);
    }
    if (info.isDirectory()) {
      const found = await filesUnder(source, named);
      if (found.length === 0) throw new SourceError(`${source} holds no *.json, *.jsonl or *.ndjson files`);
      for (const f of found) add(f.file, f.info);
    } else add(source, info);
  }
  // Readable, every one, before anything is stored: one this user may not read (another user's
  // file, 0600) stopped the import when its turn came, after the batches before it were stored,
  // and was reported as a usage error, as if nothing had been imported.
  for (const file of files) {
    if (file === '-') continue;
    try {
      await access(file, constants.R_OK);
    } catch (err) {
      throw new SourceError(readProblem(file, err));
    }
  }
  return files;
}

/**
 * Whether the files (listSources') hold `documents` documents or `bytes` bytes or more, told
 * without parsing them: a *.json file is one document, a JSON-lines file one a line (blank lines
 * counted too: a count from above). Standard input and other files of no size known up front (a
 * named pipe) may hold any number: true, without reading them (their producer may be slow). Reads
 * fewer than `bytes` bytes in all: the JSON-lines files, up to the first answer.
 */
export async function holdsAtLeast(files: readonly string[], limits: { documents: number; bytes: number }): Promise<boolean> {
  let documents = 0;
  let bytes = 0;
  for (const file of files) {
    if (file === '-') return true;
    // A file gone or unreadable since listSources saw it: its reading says so.
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return true;
    if (bytes + info.size >= limits.bytes) return true;
    documents += isJsonLines(file) ? await linesIn(file, limits.bytes - bytes) : 1;
    bytes += info.size;
    if (documents >= limits.documents) return true;
  }
  return false;
}

/** The lines of a JSON-lines file of fewer than `limit` bytes (Infinity once it has grown past it; 0 when it cannot be read). */
async function linesIn(file: string, limit: number): Promise<number> {
  let text: Buffer;
  try {
    text = await readBounded(file, limit);
  } catch (err) {
    return err instanceof FileTooLarge ? Infinity : 0;
  }
  let lines = text.length > 0 && text.at(-1) !== 0x0a ? 1 : 0;
  for (let at = text.indexOf(0x0a); at !== -1; at = text.indexOf(0x0a, at + 1)) lines++;
  return lines;
}

/**
 * The importable files in `dir` and below, in name order, each with what stat says of it. A
 * symbolic link to a file counts as the file (a Kubernetes ConfigMap or Secret volume holds
 * nothing else); one to a directory is no document. One that points nowhere is a file that
 * cannot be read, as it would be named on the command line: skipped without a word, a card the
 * user meant to import was missing from the registry with exit 0. So is a named pipe, a device
 * or a socket with an importable name (or a link to one), which was skipped without a word too:
 * it is not read (a pipe may wait for ever for a writer, a device never end), unless `named`
 * (dev:ino) holds it, named on the command line as well.
 */
async function filesUnder(dir: string, named: ReadonlySet<string>): Promise<Array<{ file: string; info: Stats }>> {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (err) {
    // A directory below it this user may not list: named as a source that cannot be read (it was
    // "nothing was imported: EACCES: permission denied, scandir ...", as if storage had failed).
    throw new SourceError(readProblem((err as NodeJS.ErrnoException).path ?? dir, err));
  }
  const candidates = entries
    .filter((e) => !e.isDirectory() && isImportable(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
  const files: Array<{ file: string; info: Stats }> = [];
  for (const file of candidates) {
    let info: Stats;
    try {
      info = await stat(file); // follows the link
    } catch (err) {
      throw await unreadable(file, err);
    }
    if (info.isFile()) files.push({ file, info });
    else if (!info.isDirectory() && !named.has(`${info.dev}:${info.ino}`)) {
      throw new SourceError(
        `cannot read ${file}: it is ${kindOf(info)}, not a file; an import reads the files of a directory, not its pipes, devices or sockets ` +
          '(a pipe may wait for ever for a writer): remove it or move it out of the directory, or, to read it, name it on the command line too',
      );
    }
  }
  return files;
}

/** What a file system object that is neither a file nor a directory is, for a message. */
function kindOf(info: Stats): string {
  if (info.isFIFO()) return 'a named pipe';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/**
 * Why `file` cannot be read, as a SourceError. A symbolic link whose target is missing says so,
 * and where it points: "no such file" about a name `ls` lists was no help.
 */
async function unreadable(file: string, err: unknown): Promise<SourceError> {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
    const target = await readlink(file).catch(() => undefined);
    if (target !== undefined) {
      const resolved = resolve(dirname(file), target);
      const where = resolved === target ? target : `${target} (${resolved})`;
      return new SourceError(`cannot read ${file}: it is a symbolic link to ${where}, which does not exist; remove the link or restore its target`);
    }
  }
  return new SourceError(readProblem(file, err));
}

/**
 * The documents of the listed files, in order. `stdin` is read for "-". `maxBytes`: the longest
 * document read (longer ones come as `tooLong`).
 */
export async function* readDocuments(files: readonly string[], maxBytes: number, stdin: Readable = process.stdin): AsyncGenerator<SourceDocument> {
  for (const file of files) {
    if (file === '-') yield* jsonLines(inputName(file), stdin, maxBytes);
    else if (isJsonLines(file)) yield* jsonLines(file, createReadStream(file), maxBytes);
    else {
      let bytes: Buffer;
      try {
        const size = (await stat(file)).size;
        if (size > maxBytes) {
          yield { file, text: '', bytes: size, tooLong: maxBytes };
          continue;
        }
        // Bounded too: a device or a pipe has no size to check first (`import /dev/zero` read for ever).
        bytes = await readBounded(file, maxBytes);
      } catch (err) {
        throw new SourceError(err instanceof FileTooLarge ? err.message : readProblem(file, err));
      }
      let text = bytes.toString('utf8');
      // A UTF-8 byte order mark is tolerated; it still counts towards the size, as for an upload.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      const notUtf8 = whereNotUtf8(bytes);
      yield { file, text, bytes: bytes.length, ...(notUtf8 ? { notUtf8 } : {}) };
    }
  }
}

async function* jsonLines(file: string, input: Readable, maxBytes: number): AsyncGenerator<SourceDocument> {
  let first = true;
  /** A line was read (a blank one, too): an empty source read none. */
  let someLine = false;
  try {
    for await (const read of boundedLines(input, maxBytes)) {
      const { line } = read;
      someLine = true;
      if ('tooLong' in read) {
        yield { file, line, text: '', bytes: read.tooLong, tooLong: maxBytes };
        first = false;
        continue;
      }
      // A UTF-16 file (Windows PowerShell's `>` writes one), split at its 0x0A bytes: after the first
      // line, each was refused on its own as "unexpected character", one refusal a line (and one
      // more for the byte after the last newline). Said once, for the source, which is not read on.
      if (first && read.notUtf8?.utf16) {
        yield { file, line, text: '', bytes: 0, notUtf8: { ...read.notUtf8, reason: `${read.notUtf8.reason} (the rest of it was not read)` } };
        return;
      }
      const trimmed = read.text.replace(/^\uFEFF/, '').trim();
      if (trimmed === '') continue;
      // `cat card.json | a2a-registry import -`, or a *.jsonl file holding pretty-printed JSON: each
      // of its lines was refused as not JSON, 44 refusals for one card. Said once, for the source.
      if (first && (trimmed === '{' || trimmed === '[')) {
        yield { file, line, text: '', bytes: 0, notJsonLines: trimmed };
        return;
      }
      first = false;
      // A byte-order mark is tolerated at the start of any line, not the first alone: files saved
      // with one (Windows editors) and joined (`cat a.jsonl b.jsonl`) carry one at each file's first line.
      const clean = read.text.charCodeAt(0) === 0xfeff ? read.text.slice(1) : read.text;
      yield { file, line, text: clean, bytes: Buffer.byteLength(clean), ...(read.notUtf8 ? { notUtf8: read.notUtf8 } : {}) };
    }
    // No document in it: said once, for the source, as an empty *.json file is.
    if (first) yield { file, text: '', bytes: 0, noDocuments: someLine ? 'blank' : 'empty' };
  } catch (err) {
    throw new SourceError(readProblem(file, err));
  } finally {
    if (input !== process.stdin) input.destroy();
  }
}
