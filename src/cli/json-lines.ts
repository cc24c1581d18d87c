/**
 * The lines of a JSON-lines stream, each held in memory only up to a byte limit: a longer line
 * is skipped as it streams past (its bytes counted, not kept) and reported as too long, so a
 * line of hundreds of megabytes (a corrupt export, a file of another kind) costs no memory and
 * cannot exceed the longest string the runtime can hold. Node's readline, which this replaces,
 * buffers a whole line whatever its length, and dies on one past ~512 MB (`Invalid string length`).
 *
 * Lines end at "\n"; a "\r" before it is dropped (CRLF files). The split is on bytes, and a line
 * is decoded as UTF-8 only once it is whole, so a character cut across two chunks stays intact.
 */
import type { Readable } from 'node:stream';
import { whereNotUtf8, type NotUtf8 } from './utf8-text.js';

export type JsonLine =
  /** 1-based line number and its text (without the line ending); `notUtf8` where its bytes are not UTF-8 (its text then holds U+FFFD for them). */
  | { line: number; text: string; notUtf8?: NotUtf8 }
  /** A line longer than the limit: how many bytes it had. Its text was not kept. */
  | { line: number; tooLong: number };

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export async function* boundedLines(input: Readable, maxLineBytes: number): AsyncGenerator<JsonLine> {
  let line = 1;
  let pieces: Buffer[] = [];
  let length = 0;
  const finish = (): JsonLine => {
    const done: JsonLine = length > maxLineBytes ? { line, tooLong: length } : decoded(line, withoutCarriageReturn(Buffer.concat(pieces, length)));
    pieces = [];
    length = 0;
    line++;
    return done;
  };
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    for (;;) {
      const end = bytes.indexOf(NEWLINE, start);
      const piece = bytes.subarray(start, end === -1 ? bytes.length : end);
      // Kept only while the line may still be short enough; past the limit only its length counts.
      if (length + piece.length <= maxLineBytes) pieces.push(piece);
      else pieces = [];
      length += piece.length;
      if (end === -1) break;
      yield finish();
      start = end + 1;
    }
  }
  if (length > 0) yield finish();
}

function decoded(line: number, bytes: Buffer): JsonLine {
  const notUtf8 = whereNotUtf8(bytes);
  return notUtf8 ? { line, text: bytes.toString('utf8'), notUtf8 } : { line, text: bytes.toString('utf8') };
}

function withoutCarriageReturn(line: Buffer): Buffer {
  return line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN ? line.subarray(0, -1) : line;
}
