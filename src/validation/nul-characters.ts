/**
 * U+0000 (NUL) anywhere in a document, a member's name or a string value: refused, on every
 * storage engine. PostgreSQL's text cannot hold it ("invalid byte sequence for encoding UTF8:
 * 0x00") nor its jsonb the escape "\u0000", SQLite can, and whether a document was registered
 * must not depend on the engine underneath; nor on where in the document the character is (a
 * document's texts and ids already refuse it as a control character, display-text.ts). Programs
 * that read a registered card on (C strings, databases of their own) end or refuse a string at
 * it too. Nothing legitimate needs it: binary data in JSON is base64 text.
 *
 * One cheap pass over every string decides (most documents hold none); only then is the document
 * walked again with paths, to say where.
 */
import type { Finding } from '../contract/types.js';
import { isObject, pointer, quote } from '../lib/json.js';
import { MAX_FINDINGS } from './types.js';

const NUL = '\u0000';
export const NUL_CHARACTER_RULE = 'nul-character';
const HINT =
  'Remove it: the registry stores no U+0000 (PostgreSQL cannot hold it, and many programs end a string at it), on any storage engine. ' +
  'Send binary data as base64 text.';

/** Whether any string of `root`, a member's name included, holds U+0000. */
export function holdsNul(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (node.includes(NUL)) return true;
    } else if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
    } else if (isObject(node)) {
      for (const key in node) {
        if (key.includes(NUL)) return true;
        stack.push(node[key]);
      }
    }
  }
  return false;
}

/**
 * A finding for each string of `root` holding U+0000, at its JSON Pointer under `at`. A member
 * whose name holds one is said at its object, the name quoted ("\u0000" written out), since a
 * pointer would carry the character itself into every message and log that names the path; what
 * is under that member is not looked at (the member goes as a whole).
 */
export function nulCharacterErrors(root: unknown, at = ''): Finding[] {
  if (!holdsNul(root)) return [];
  const errors: Finding[] = [];
  const stack: { node: unknown; path: string }[] = [{ node: root, path: at }];
  while (stack.length > 0 && errors.length < MAX_FINDINGS) {
    const { node, path } = stack.pop()!;
    if (typeof node === 'string') {
      const position = node.indexOf(NUL);
      if (position !== -1) errors.push({ path, rule: NUL_CHARACTER_RULE, message: `holds the character U+0000 (NUL) at position ${position}`, hint: HINT });
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], path: pointer(path, i) });
    } else if (isObject(node)) {
      const members: { node: unknown; path: string }[] = [];
      for (const key of Object.keys(node)) {
        if (key.includes(NUL)) {
          errors.push({ path, rule: NUL_CHARACTER_RULE, message: `the member name ${quote(key)} holds the character U+0000 (NUL) at position ${key.indexOf(NUL)}`, hint: HINT });
        } else {
          members.push({ node: node[key], path: pointer(path, key) });
        }
      }
      // Reversed onto the stack, so findings come in the document's order.
      for (let i = members.length - 1; i >= 0; i--) stack.push(members[i]!);
    }
  }
  return errors;
}
