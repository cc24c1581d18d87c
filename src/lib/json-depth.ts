/**
 * Nesting depth of JSON text, measured on the raw bytes before anything parses it.
 *
 * JSON.parse itself copes with any depth, but almost everything after it recurses: the SDK's
 * fromJSON/toJSON and its task bookkeeping, zod, JSON.stringify. A body nested a few thousand
 * levels deep (a few KB of "[[[[") overflows the stack there, and a stored document nested that
 * deep could no longer be read back. So depth is capped where the bytes come in: request bodies
 * (before JSON.parse) and uploaded documents (before they are parsed and stored).
 */
import { isUtf8 } from 'node:buffer';

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * True when the JSON text nests objects/arrays deeper than `limit`. Brackets inside strings do
 * not count. Linear, no recursion, no allocation; malformed text is left to the parser.
 */
export function nestsDeeperThan(text: Uint8Array | string, limit: number): boolean {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === BACKSLASH) i++; // skip the escaped character (an escaped quote does not end the string)
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

/**
 * True when the bytes are well-formed UTF-8 (lone surrogates, overlongs and truncated sequences
 * are not). Node's own check: every request body goes through it, and a strict TextDecoder
 * built (then dropped) the body's whole text only to say the same.
 */
export function isWellFormedUtf8(bytes: Uint8Array): boolean {
  return isUtf8(bytes);
}

/**
 * True when a decoded value (objects and arrays, as protobuf Struct/ListValue decode to) nests
 * deeper than `limit`: the same bound as nestsDeeperThan, for requests that arrive already
 * decoded (gRPC). Byte arrays count as leaves. Iterative, so any depth is safe to measure.
 */
export function valueNestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null || ArrayBuffer.isView(node)) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}
