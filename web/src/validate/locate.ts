/**
 * Where a JSON Pointer (the registry's `details[].path`) sits in the text the person typed, so
 * the page can mark it. jsonc-parser keeps every node's offset, and parses broken JSON as far
 * as it can, which also locates the first syntax error.
 */
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';

export interface TextRange {
  start: number;
  end: number;
}

/** "/skills/0/tags" → ["skills", "0", "tags"] (RFC 6901 escapes undone). */
export function pointerSegments(pointer: string): string[] {
  if (pointer === '' || pointer === '/') return [];
  return pointer
    .replace(/^\//, '')
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const STRICT = { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false };

export interface ParsedDocument {
  root: Node | undefined;
  /** The first syntax error, with a readable name ("CommaExpected" → "comma expected"). */
  syntaxError?: { range: TextRange; message: string };
}

export function parseDocument(text: string): ParsedDocument {
  const errors: ParseError[] = [];
  let root: Node | undefined;
  try {
    root = parseTree(text, errors, STRICT);
  } catch (err) {
    // jsonc-parser recurses once per level: nesting a few thousand deep ([[[[…]]]]) overflows the
    // stack. Such a document is listed with its problems, unmarked, rather than leaving the page
    // stuck at "Validating…" with the registry's answer in hand.
    if (err instanceof RangeError) return { root: undefined };
    throw err;
  }
  const first = errors[0];
  if (!first) return { root };
  const code = printParseErrorCode(first.error);
  const name = code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  let start = first.offset;
  // A control character in a string (a tab pasted from an editor) is reported at the string's
  // opening quote: the position said is the character's, as the registry's message says it.
  if (code === 'InvalidCharacter') {
    const at = text.slice(first.offset, first.offset + first.length).search(/[\u0000-\u001f]/);
    if (at > 0) start = first.offset + at;
  }
  return { root, syntaxError: { range: { start, end: Math.max(start + 1, first.offset + first.length) }, message: name } };
}

/** The node a pointer names, or its deepest existing ancestor (a missing property is reported at its parent). */
function nodeAt(root: Node, segments: string[]): { node: Node; exact: boolean } {
  let node = root;
  for (const segment of segments) {
    let next: Node | undefined;
    if (node.type === 'object') {
      // The last property of that name wins, as in JSON.parse.
      const property = [...(node.children ?? [])].reverse().find((p) => p.children?.[0]?.value === segment);
      next = property?.children?.[1];
    } else if (node.type === 'array' && /^(0|[1-9]\d*)$/.test(segment)) {
      next = node.children?.[Number(segment)];
    }
    if (!next) return { node, exact: false };
    node = next;
  }
  return { node, exact: true };
}

/**
 * The range to mark for a pointer: a scalar with its property name, or only the name and the
 * opening bracket of an object or array (marking a whole array would mark half the document).
 */
export function locate(parsed: ParsedDocument, pointer: string): TextRange | undefined {
  if (!parsed.root) return undefined;
  const { node } = nodeAt(parsed.root, pointerSegments(pointer));
  const key = node.parent?.type === 'property' ? node.parent.children?.[0] : undefined;
  const start = key ? key.offset : node.offset;
  const end = node.type === 'object' || node.type === 'array' ? node.offset + 1 : node.offset + node.length;
  return { start, end };
}
