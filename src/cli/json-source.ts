/**
 * A JSON file as the user wrote it: parsed strictly (JSON.parse decides what is valid), and
 * mapped back to lines and columns, so that every message about it reads like a compiler's
 * (`card.json:12:7: ...`) and an editor can jump to the spot.
 *
 * jsonc-parser only locates things: where JSON.parse failed (V8's own messages carry no
 * position for many mistakes), and where a JSON Pointer from a validator finding points.
 */
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import { whereNotUtf8 } from './utf8-text.js';

/** 1-based, as editors and compilers count; columns in UTF-16 code units, as editors do. */
export interface SourcePosition {
  line: number;
  column: number;
}

/** A place in a file; without line and column, the file as a whole. */
export interface SourceLocation {
  file: string;
  line?: number;
  column?: number;
}

/** Why a text is not JSON, and where. */
export class JsonSyntaxError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
    readonly position: SourcePosition | undefined,
  ) {
    super(`${position ? `${file}:${position.line}:${position.column}` : file}: not valid JSON: ${reason}`);
  }

  get location(): SourceLocation {
    return { file: this.file, ...this.position };
  }
}

/** Why a file holding one JSON value and then more text is not JSON (two documents, JSON lines). */
export const TEXT_AFTER_VALUE = 'unexpected text after the JSON value';

const REASONS: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'invalid number',
  PropertyNameExpected: 'expected a property name in double quotes',
  ValueExpected: 'expected a value',
  ColonExpected: "expected ':' after the property name",
  CommaExpected: "expected ',' between members",
  CloseBraceExpected: "expected '}' to close the object",
  CloseBracketExpected: "expected ']' to close the array",
  EndOfFileExpected: TEXT_AFTER_VALUE,
  InvalidCommentToken: 'comments are not allowed in JSON',
  UnexpectedEndOfComment: 'comments are not allowed in JSON',
  UnexpectedEndOfString: 'unterminated string',
  UnexpectedEndOfNumber: 'incomplete number',
  InvalidUnicode: 'invalid \\u escape',
  InvalidEscapeCharacter: 'invalid escape sequence',
  InvalidCharacter: 'control character inside a string (escape it, e.g. \\n)',
};

export class JsonSource {
  private constructor(
    /** The file as the user named it ("-" for stdin). */
    readonly file: string,
    readonly value: unknown,
    /** The text parsed (a leading byte-order mark removed): what only it shows is checked on it (validation/json-fidelity.ts). */
    readonly text: string,
    private readonly tree: Node | undefined,
  ) {}

  /**
   * Parses `bytes` (UTF-8; a leading byte-order mark is ignored) or throws JsonSyntaxError with
   * the line and column of the first mistake, a byte that is not UTF-8 included.
   */
  static parse(file: string, bytes: Buffer): JsonSource {
    const notUtf8 = whereNotUtf8(bytes);
    if (notUtf8) throw new JsonSyntaxError(file, notUtf8.reason, { line: notUtf8.line, column: notUtf8.column });
    let text = bytes.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const errors: ParseError[] = [];
    const tree = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      if (text.trim() === '') throw new JsonSyntaxError(file, 'the file is empty', undefined);
      const first = errors[0];
      if (!first) throw new JsonSyntaxError(file, (err as Error).message, positionFromV8(text, err as Error));
      throw new JsonSyntaxError(file, reasonOf(text, first), positionAt(text, first.offset));
    }
    return new JsonSource(file, value, text, tree);
  }

  /** Line and column of what a JSON Pointer names; of its nearest existing ancestor when it names a missing member. */
  positionOf(pointer: string): SourcePosition | undefined {
    if (!this.tree || (pointer !== '' && !pointer.startsWith('/'))) return undefined;
    let node: Node = this.tree;
    for (const segment of pointer === '' ? [] : pointer.slice(1).split('/')) {
      const key = segment.replaceAll('~1', '/').replaceAll('~0', '~');
      const next = child(node, key);
      if (!next) break;
      node = next;
    }
    // A member's position is its key's ("name": ...), which is where a reader looks.
    const at = node.parent?.type === 'property' && node.parent.children?.[1] === node ? node.parent : node;
    return positionAt(this.text, at.offset);
  }

  /** Where a pointer is in the file; the file alone for the whole document ("") or a pointer it cannot place. */
  locate(pointer: string): SourceLocation {
    return pointer === '' ? { file: this.file } : { file: this.file, ...this.positionOf(pointer) };
  }
}

function child(node: Node, key: string): Node | undefined {
  if (node.type === 'object') {
    // A name given twice: the last, which JSON.parse keeps, is the one the findings are about.
    const members = node.children ?? [];
    for (let i = members.length - 1; i >= 0; i--) {
      if (members[i]!.children?.[0]?.value === key) return members[i]!.children?.[1];
    }
    return undefined;
  }
  if (node.type === 'array' && /^(0|[1-9][0-9]*)$/.test(key)) return node.children?.[Number(key)];
  return undefined;
}

function reasonOf(text: string, error: ParseError): string {
  const name = printParseErrorCode(error.error);
  // `{"a": 1,}` and `[1,]`: say what it is rather than what the grammar expected next.
  if ((name === 'PropertyNameExpected' || name === 'ValueExpected') && /,\s*$/.test(text.slice(0, error.offset)) && /^[}\]]/.test(text.slice(error.offset))) {
    return 'trailing comma (JSON allows none before } or ])';
  }
  if (name === 'InvalidSymbol' && text[error.offset] === "'") return 'strings and names need double quotes, not single quotes';
  return REASONS[name] ?? name;
}

function positionAt(text: string, offset: number): SourcePosition {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/** Older and newer V8 put "at position N" in some messages; use it when the locator found nothing. */
function positionFromV8(text: string, err: Error): SourcePosition | undefined {
  const m = /at position (\d+)/.exec(err.message);
  return m ? positionAt(text, Number(m[1])) : undefined;
}
