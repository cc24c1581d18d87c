/**
 * The search index saved to a file, so a restart loads it instead of re-indexing every entry
 * (at 1,000,000 entries: seconds instead of minutes).
 *
 * Layout: a magic line, then sections `[u16 name length][name][u8 kind][u64 byte length][bytes]`,
 * then an end section holding the CRC-32 of everything before it (a third of SHA-256's CPU time
 * over the 1.4 GB of a 1,000,000-entry index, and enough to catch a torn or damaged file). Typed arrays are written as
 * raw bytes (read straight back into a new array), long string arrays in chunks, other values
 * with v8.serialize. The first section ("meta") names the format, the registry version and the
 * change-log position the index is at, so a reader rejects a file from another version without
 * reading the rest.
 *
 * Writing is atomic: into `<file>.<pid>.tmp`, flushed, then renamed over the file. The state written
 * is a copy taken at one moment (see IndexState), and the writer yields to the event loop
 * between pieces, so requests are served while it writes. Reading checks every length and the
 * checksum; any fault is reported as a reason, never as a half-loaded index.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import v8 from 'node:v8';
import { crc32 } from 'node:zlib';
import { Int32Pieces, type IndexState, type StatePart } from './index-state.js';
import { makeDirectories } from '../lib/make-directories.js';

/** Bumped whenever what an index saves, or how it indexes, changes. */
export const SNAPSHOT_FORMAT = 33;
/**
 * The formats this code loads: its own. 23 and 24 are rebuilt: their words for phrases do not
 * say how many of a unit's words are its name's (./phrases.ts), which a search for a skill's or
 * tool's exact name reads, so loaded they would find none until each entry changed. 25 (never
 * released) has no filter of skill and tool names (./name-filter.ts). 26 is rebuilt: it lacks
 * the one word of each hyphenated word ("co-pilot": `copilot`, ./text-encoder.ts joinedTerms),
 * in the terms and the name filter, so "copilot" as typed ("copil") would find no "co-pilot"
 * until each entry changed. 27 is rebuilt: it lacks an entry's second name term read with its
 * letters joined ("E-mail Sender": `email sender`, ./text-encoder.ts letterJoined) and the letter
 * joined to its next part of a longer hyphenated word ("e-mail-sender": `email`). 28 is rebuilt:
 * it lacks the name terms read with hyphenated words as one ("Co-Pilot": `copilot`,
 * ./text-encoder.ts hyphenJoined) and skills' and tools' other name terms ("E-mail Sender" as a
 * skill: `email sender`), so "copilot" would name no "Co-Pilot" until each entry changed. 29 is
 * rebuilt: it read an acronym's plural as an acronym and a word ("APIs": `ap`, "PDFs": `pd fs`;
 * ./text-encoder.ts isAcronymPlural), so "api" would find no "APIs" until each entry changed, and
 * "A2A" as `a2` (letterDigitsLetter), so "a2a" would find no "A2A". 30 is rebuilt: it kept Greek's
 * final sigma (`ς`) apart from sigma, and Arabic letters written either way (`ى` `ي`, `ة` `ه`,
 * Persian `ی` `ک`) apart (./text-encoder.ts fold), so "οδοσ" would find no "οδός", "مدرسه" no
 * "مدرسة", until each entry changed. 31 is rebuilt: it kept Arabic-Indic and Persian digits
 * (`٢٠٢٤`, `۲۰۲۴`) apart from ASCII digits (./text-encoder.ts fold), so "2024" would find no
 * "٢٠٢٤" until each entry changed. 32 is rebuilt: it kept the other scripts' digits (Devanagari
 * `२०२४`, Bengali, Thai `๒๐๒๔`, ...) apart from ASCII digits, so "2024" would find no "२०२४".
 */
export const LOADABLE_SNAPSHOT_FORMATS: readonly number[] = [SNAPSHOT_FORMAT];
const MAGIC = 'a2a-registry search index\n';
const END = '\u0000end';

const KIND_V8 = 1;
const KIND_STRINGS = 2;
const TYPED = [Int32Array, Uint8Array, Uint16Array, Float64Array] as const;
/** Kind 10 + position in TYPED. */
const KIND_TYPED = 10;
/** Strings per chunk of a long string array, and bytes per write of a typed array. */
const STRING_CHUNK = 50_000;
const WRITE_CHUNK = 32 * 2 ** 20;

export interface SnapshotMeta {
  format: number;
  /** The registry's version (package.json): another version's file is not read. */
  version: string;
  /** The change-log position the index reflects: every change up to it is in the index. */
  seq: number;
  /** Entries in the index. */
  entries: number;
  savedAt: string;
  /**
   * What identifies the change at `seq` in the log it was saved beside (RegistryStore.changeMark;
   * absent when the log holds none there): a database restored from a backup numbers its new
   * changes from the backup's position, so a position alone cannot tell this log from another.
   */
  mark?: string;
}

type TypedArray = Int32Array | Uint8Array | Uint16Array | Float64Array;
const typedKind = (v: unknown): number => TYPED.findIndex((T) => v instanceof T);
const isStrings = (v: unknown): v is readonly (string | undefined)[] => Array.isArray(v) && v.length > STRING_CHUNK;
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/**
 * The running CRC-32 over `data`. Empty data leaves it as it is: Node.js 22's zlib.crc32 answers 0
 * for a view of an empty ArrayBuffer (an empty saved part), whatever the running value.
 */
const hash = (data: Uint8Array, crc: number): number => (data.byteLength === 0 ? crc : crc32(data, crc));

/** Writes `state` to `file` atomically. */
export async function writeIndexSnapshot(file: string, meta: SnapshotMeta, state: IndexState): Promise<{ bytes: number }> {
  const tmp = `${file}.${process.pid}.tmp`;
  // On PostgreSQL nothing else creates the directory (REGISTRY_DATA_DIR, or
  // REGISTRY_INDEX_SNAPSHOT_DIR): without this, every save failed and every start re-indexed.
  makeDirectories(path.dirname(file), 0o700);
  // The registry's user's alone, like the database: a snapshot is loaded in place of the entries.
  const out = await fs.open(tmp, 'w', 0o600);
  let crc = 0;
  let bytes = 0;
  const put = async (data: Uint8Array): Promise<void> => {
    crc = hash(data, crc);
    await out.write(data);
    bytes += data.byteLength;
  };
  const header = (name: string, kind: number, length: number): Uint8Array => {
    const n = Buffer.from(name, 'utf8');
    const h = Buffer.alloc(2 + n.length + 1 + 8);
    h.writeUInt16LE(n.length, 0);
    n.copy(h, 2);
    h.writeUInt8(kind, 2 + n.length);
    h.writeBigUInt64LE(BigInt(length), 3 + n.length);
    return h;
  };
  const value = async (name: string, kind: number, v: unknown): Promise<void> => {
    const body = v8.serialize(v);
    await put(header(name, kind, body.length));
    await put(body);
  };
  try {
    await put(Buffer.from(MAGIC, 'utf8'));
    await value('meta', KIND_V8, meta);
    for (const [name, v] of state) {
      const t = typedKind(v);
      if (v instanceof Int32Pieces) {
        // One Int32Array section: the pieces gathered into chunks (copies, as below).
        await put(header(name, KIND_TYPED + TYPED.indexOf(Int32Array), v.length * 4));
        const chunk = new Int32Array(WRITE_CHUNK / 4);
        let fill = 0;
        const flush = async (): Promise<void> => {
          // (`put` has written the chunk when it returns: it may be filled again.)
          await put(new Uint8Array(chunk.buffer, 0, fill * 4));
          fill = 0;
          await tick();
        };
        for (const piece of v.pieces) {
          for (let at = 0; at < piece.length; ) {
            const n = Math.min(piece.length - at, chunk.length - fill);
            chunk.set(piece.subarray(at, at + n), fill);
            fill += n;
            at += n;
            if (fill === chunk.length) await flush();
          }
        }
        if (fill > 0) await flush();
      } else if (t >= 0) {
        const a = v as TypedArray;
        const raw = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
        await put(header(name, KIND_TYPED + t, raw.byteLength));
        for (let at = 0; at < raw.byteLength; at += WRITE_CHUNK) {
          // A copy, not a view: parts shared with the live index may still take appends in their
          // spare room (bytes no saved list reaches) while the write is in flight, and the file
          // must hold exactly the bytes its checksum was computed over.
          await put(raw.slice(at, Math.min(raw.byteLength, at + WRITE_CHUNK)));
          await tick();
        }
      } else if (isStrings(v)) {
        // Chunks, each a section of its own name; the reader concatenates them.
        for (let at = 0; at < v.length; at += STRING_CHUNK) {
          await value(name, KIND_STRINGS, v.slice(at, at + STRING_CHUNK));
          await tick();
        }
      } else {
        await value(name, KIND_V8, v);
      }
    }
    const digest = Buffer.alloc(4);
    digest.writeUInt32LE(crc >>> 0, 0);
    await out.write(header(END, KIND_V8, digest.length));
    await out.write(digest);
    await out.sync();
  } catch (err) {
    await out.close().catch(() => undefined);
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await out.close();
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    // Not left behind, as large as the index, for every save that fails so (a directory where
    // the file belongs, the file made immutable): the next save writes it again.
    await fs.rm(tmp, { force: true });
    throw err;
  }
  return { bytes };
}

/**
 * Removes the temporary files writers of `file` left when they died mid-save (`<file>.<pid>.tmp`,
 * never renamed: SIGKILL, the OOM killer, a crash): each can be as large as the index (1.4 GB at
 * 1,000,000 entries), and nothing else ever removed them, so every crash during a save left one
 * more. Call it before this process saves. A file whose process still runs (another registry
 * sharing the directory) is left alone; this process's own pid is a previous process's that had
 * it (a container restarted). Returns the names removed and their bytes.
 */
export async function removeAbandonedWrites(file: string): Promise<{ removed: string[]; bytes: number }> {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return { removed: [], bytes: 0 }; // no directory yet: nothing was ever saved here
  }
  const removed: string[] = [];
  let bytes = 0;
  for (const name of names) {
    const pid = name.startsWith(prefix) && name.endsWith('.tmp') ? name.slice(prefix.length, -'.tmp'.length) : undefined;
    if (pid === undefined || !/^\d+$/.test(pid)) continue;
    if (Number(pid) !== process.pid && isRunning(Number(pid))) continue;
    const where = path.join(dir, name);
    try {
      const { size } = await fs.stat(where);
      await fs.rm(where, { force: true });
      removed.push(name);
      bytes += size;
    } catch {
      // gone meanwhile, or not ours to remove: left as it is
    }
  }
  return { removed, bytes };
}

/** Whether a process with this pid exists (EPERM: it does, as another user's). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The meta of a snapshot (its first section: a few bytes read, the rest left unread), or
 * undefined when there is none or it cannot be read as one.
 */
export async function readSnapshotMeta(file: string): Promise<SnapshotMeta | undefined> {
  let meta: SnapshotMeta | undefined;
  await readIndexSnapshot(file, (m) => {
    meta = m;
    return 'only its meta was asked for';
  });
  return meta;
}

/** Why a snapshot cannot be used, or its meta and state. */
export type SnapshotRead = { ok: true; meta: SnapshotMeta; state: IndexState } | { ok: false; reason: string };

/**
 * Reads a snapshot written by writeIndexSnapshot; `accept` decides from the meta alone whether
 * to read on (a reason string rejects it).
 */
export async function readIndexSnapshot(
  file: string,
  accept: (meta: SnapshotMeta) => string | undefined | Promise<string | undefined>,
): Promise<SnapshotRead> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    return { ok: false, reason: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'there is none' : `it cannot be opened: ${(err as Error).message}` };
  }
  try {
    const size = (await handle.stat()).size;
    let crc = 0;
    let pos = 0;
    const read = async (into: Uint8Array, hashed = true): Promise<void> => {
      if (pos + into.byteLength > size) throw new Error('it is truncated');
      for (let done = 0; done < into.byteLength; ) {
        const { bytesRead } = await handle.read(into, done, Math.min(WRITE_CHUNK, into.byteLength - done), pos + done);
        if (bytesRead === 0) throw new Error('it is truncated');
        done += bytesRead;
      }
      pos += into.byteLength;
      if (hashed) crc = hash(into, crc);
    };
    const header = async (hashed = true): Promise<{ name: string; kind: number; length: number }> => {
      const len = Buffer.alloc(2);
      await read(len, hashed);
      const rest = Buffer.alloc(len.readUInt16LE(0) + 9);
      await read(rest, hashed);
      const n = len.readUInt16LE(0);
      const length = Number(rest.readBigUInt64LE(n + 1));
      if (length > size - pos) throw new Error('it is truncated');
      return { name: rest.toString('utf8', 0, n), kind: rest.readUInt8(n), length };
    };
    const magic = Buffer.alloc(Buffer.byteLength(MAGIC));
    await read(magic);
    if (magic.toString('utf8') !== MAGIC) return { ok: false, reason: 'it is not a search index snapshot' };
    const first = await header();
    if (first.name !== 'meta' || first.kind !== KIND_V8) return { ok: false, reason: 'it has no meta section' };
    const metaBytes = Buffer.alloc(first.length);
    await read(metaBytes);
    const meta = v8.deserialize(metaBytes) as SnapshotMeta;
    const rejected = await accept(meta);
    if (rejected) return { ok: false, reason: rejected };
    const state: IndexState = new Map();
    for (;;) {
      const at = pos;
      const peek = await header(false);
      if (peek.name === END) {
        const digest = Buffer.alloc(peek.length);
        await read(digest, false);
        if (pos !== size) return { ok: false, reason: 'it has bytes after its end' };
        if (digest.length !== 4 || digest.readUInt32LE(0) !== crc >>> 0) return { ok: false, reason: 'its checksum does not match (the file is corrupt)' };
        return { ok: true, meta, state };
      }
      // Re-read the header into the hash (it was peeked without).
      pos = at;
      const { name, kind, length } = await header();
      if (kind >= KIND_TYPED && kind < KIND_TYPED + TYPED.length) {
        const T = TYPED[kind - KIND_TYPED]!;
        if (length % T.BYTES_PER_ELEMENT !== 0) return { ok: false, reason: `its part "${name}" has a broken length` };
        const a = new T(length / T.BYTES_PER_ELEMENT);
        await read(new Uint8Array(a.buffer));
        state.set(name, a);
      } else if (kind === KIND_STRINGS || kind === KIND_V8) {
        const body = Buffer.alloc(length);
        await read(body);
        const v: StatePart = v8.deserialize(body);
        if (kind === KIND_STRINGS) {
          const list = (state.get(name) as (string | undefined)[] | undefined) ?? [];
          for (const s of v as (string | undefined)[]) list.push(s);
          state.set(name, list);
        } else {
          state.set(name, v);
        }
      } else {
        return { ok: false, reason: `its part "${name}" has an unknown kind ${kind}` };
      }
      await tick();
    }
  } catch (err) {
    return { ok: false, reason: `it cannot be read: ${(err as Error).message}` };
  } finally {
    await handle.close();
  }
}
