/** Small helpers for untyped JSON values and JSON Pointers (RFC 6901). */

import { codePointLength, codePointPrefix } from './code-points.js';

export type JsonObject = Record<string, unknown>;

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Escapes one reference token: "~" becomes "~0" and "/" becomes "~1". */
export function escapePointerToken(token: string | number): string {
  // Most tokens are indexes and plain member names: no regex, no copy (every registration builds dozens).
  if (typeof token !== 'string') return String(token);
  if (!token.includes('~') && !token.includes('/')) return token;
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Appends tokens to a pointer: pointer('/skills', 0, 'tags') is "/skills/0/tags". */
export function pointer(base: string, ...tokens: Array<string | number>): string {
  let path = base;
  for (const token of tokens) path += '/' + escapePointerToken(token);
  return path;
}

/** Resolves a JSON Pointer inside `root`; `undefined` when it leads nowhere. */
export function resolvePointer(root: unknown, ptr: string): unknown {
  if (ptr === '') return root;
  if (!ptr.startsWith('/')) return undefined;
  let node: unknown = root;
  for (const raw of ptr.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      node = node[Number(token)];
    } else if (isObject(node)) {
      if (!Object.prototype.hasOwnProperty.call(node, token)) return undefined;
      node = node[token];
    } else {
      return undefined;
    }
  }
  return node;
}

/** "an array", "a string", "null"... for messages that say what was found. */
export function describeJsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'object':
      return 'an object';
    case 'string':
      return 'a string';
    case 'number':
      return Number.isInteger(v) ? 'an integer' : 'a number';
    case 'boolean':
      return 'a boolean';
    default:
      return typeof v;
  }
}

/**
 * What JSON.stringify leaves as it is but a message must not carry: DEL and C1 controls (a
 * terminal acts on them), bidirectional controls (they reorder the rest of the message on a page
 * or in a terminal: a refusal quoting "https://a.example/\u202Egnp.a2a" read backwards from
 * there), and line and paragraph separators (a message is one line).
 */
const UNPRINTED = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** `s` with each of those characters written as its \uXXXX escape (a text of the caller's in a log line, say). */
export const escapeUnprinted = (s: string): string => s.replace(UNPRINTED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Quotes a value for a message, shortened so that messages stay one line. */
export function quote(v: unknown, max = 60): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    // Too deep to serialise (JSON.parse accepts nesting that JSON.stringify cannot print back).
    s = `(${describeJsonType(v)})`;
  }
  s = escapeUnprinted(s);
  // Cut between characters (code points), never inside a surrogate pair (clipped.ts says why).
  return codePointLength(s) > max ? codePointPrefix(s, max - 1) + '…' : s;
}

/**
 * Why a JSON-RPC id that parsed as a whole number is no usable one, or undefined: an integer past
 * 2^53 - 1 (an int64 or snowflake id) is read rounded, here as in most JSON parsers, so the answer
 * could not carry the request's id back. Refusals of such an id said it must be "an integer",
 * which it is.
 */
export function unsafeIntegerIdNote(id: unknown): string | undefined {
  if (typeof id !== 'number' || !Number.isInteger(id) || Number.isSafeInteger(id)) return undefined;
  return `${String(id)} is an integer past 2^53 - 1, which is read rounded and could not be answered as sent: send a larger id as a string`;
}
