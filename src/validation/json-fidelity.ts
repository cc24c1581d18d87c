/**
 * What JSON text says that the value it parses to cannot carry through the registry as written.
 * JSON numbers are read as IEEE 754 doubles (RFC 8259 section 6, as JavaScript and most JSON
 * libraries read them), and an object keeps one member per name (section 4):
 *
 * - A number past a double's range (1e400) parses to Infinity, which JSON cannot write: the
 *   stored card said "big": null. Refused, at the value's path (rule `number-out-of-range`), on
 *   every door: the parsed value shows it (Infinity; NaN too, which only gRPC's Struct carries).
 * - A number written with more digits than a double keeps (12345678901234567890, a 64-bit id)
 *   is stored and served rounded (12345678901234567000). A warning (rule `number-rounded`), not
 *   a refusal: 1e300, or an int64 `maximum` in a tool's schema, is legitimate. Only the text
 *   shows it: a document sent inline in a request (a data part, an MCP tool's arguments) reaches
 *   the registry already read, and gets none.
 * - A name given twice in one object: JSON.parse keeps the last, other readers the first, so a
 *   second "skills" list silently replaced the first, and a card could be read two ways.
 *   Refused (rule `duplicate-key`), where the registry has the text (a file, a fetched card, the
 *   CLI's files).
 *
 * Cheap on the request path: a walk of the parsed value (members counted, non-finite numbers
 * noticed) and, with the text, one pass over its characters (members and long numbers
 * counted). Only when they disagree, or a number is long or out of range, is the text read
 * again, with positions and paths, to say what and where.
 */
import { visit } from 'jsonc-parser';
import type { Finding } from '../contract/types.js';
import { pointer, quote, type JsonObject } from '../lib/json.js';
import type { WrittenText } from './types.js';

/** One part of a validated document: its value, where it is, and its text when the registry has it as written. */
export interface DocumentPart {
  value: unknown;
  at: string;
  text?: string;
}

export interface Fidelity {
  errors: Finding[];
  warnings: Finding[];
}

const OUT_OF_RANGE_RULE = 'number-out-of-range';
const ROUNDED_RULE = 'number-rounded';
const DUPLICATE_KEY_RULE = 'duplicate-key';

/** Mantissa digits past which a double may not keep a number as written (it keeps 15 to 17). */
const LONG_MANTISSA = 16;
/** Exponent digits from which a number may be past a double's range (1e308) or below its precision (5e-324). */
const LONG_EXPONENT = 3;

/** The findings of a document's parts: errors refuse it (numbers out of range, keys given twice), warnings do not. */
export function fidelityFindings(parts: readonly DocumentPart[]): Fidelity {
  const errors: Finding[] = [];
  const warnings: Finding[] = [];
  for (const part of parts) {
    const shape = valueShape(part.value);
    if (part.text !== undefined && (shape.nonFinite || textDiffers(part.text, shape.members))) {
      const read = readWritten(part.text, part.at);
      errors.push(...read.errors);
      warnings.push(...read.warnings);
    }
    if (!shape.nonFinite) continue;
    // Said with the number as written where the text showed it; otherwise (a data part, gRPC) from the value.
    const said = new Set(errors.filter((e) => e.rule === OUT_OF_RANGE_RULE).map((e) => e.path));
    for (const found of unheldNumbers(part.value, part.at)) {
      if (!said.has(found.path)) errors.push(outOfRange(found.path, found.value, undefined));
    }
  }
  return { errors, warnings };
}

/** The parts of a document written as one text ('') or with its toolspec's text alone ('/toolspec'). */
export function partsOf(document: { value: unknown; at: string }[], written: WrittenText | undefined): DocumentPart[] {
  if (written === undefined) return document;
  if (written.at === '') return [{ value: Object.fromEntries(document.filter((p) => p.value !== undefined).map((p) => [p.at.slice(1), p.value])), at: '', text: written.text }];
  return document.map((p) => (p.at === written.at ? { ...p, text: written.text } : p));
}

/** How many members the value's objects have, and whether any number in it is one JSON cannot write. */
function valueShape(root: unknown): { members: number; nonFinite: boolean } {
  let members = 0;
  let nonFinite = false;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) nonFinite = true;
    } else if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
    } else if (typeof node === 'object' && node !== null && !ArrayBuffer.isView(node)) {
      for (const key in node) {
        members++;
        stack.push((node as JsonObject)[key]);
      }
    }
  }
  return { members, nonFinite };
}

const BACKSLASH = 0x5c;
const DOT = 0x2e;
const PLUS = 0x2b;
const MINUS = 0x2d;
const COLON = 0x3a;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/**
 * Whether the text may say more than its value (`members`, counted in it): more members than
 * the value has (a name given twice), or a number long enough to be rounded or out of range.
 * No allocation; strings, most of a document, are skipped with indexOf, and only what lies
 * between them is looked at character by character.
 */
function textDiffers(text: string, members: number): boolean {
  let colons = 0;
  let i = 0;
  while (i < text.length) {
    const quote = text.indexOf('"', i);
    const end = quote === -1 ? text.length : quote;
    /** 0: not in a number; 1: its mantissa; 2: its exponent. */
    let part = 0;
    let digits = 0;
    for (; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c >= DIGIT_0 && c <= DIGIT_9) {
        if (part === 0) {
          part = 1;
          digits = 0;
        }
        if (++digits >= (part === 1 ? LONG_MANTISSA : LONG_EXPONENT)) return true;
      } else if ((c === LOWER_E || c === UPPER_E) && part === 1) {
        part = 2;
        digits = 0;
      } else if (c !== DOT && c !== PLUS && c !== MINUS) {
        // The number, if any, ended.
        part = 0;
        if (c === COLON) colons++;
      }
    }
    if (quote === -1) break;
    i = stringEnd(text, quote) + 1;
  }
  return colons !== members;
}

/** The index of the quote that closes the string opening at `open` (the text's length if none does). */
function stringEnd(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  while (close !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return close;
    close = text.indexOf('"', close + 1);
  }
  return text.length;
}

/** 1-based, as editors count; columns in UTF-16 code units. */
interface Place {
  line: number;
  column: number;
}

/** The text read again for what it says: keys given twice, numbers as written. */
function readWritten(written: string, at: string): Fidelity {
  // A byte-order mark is no part of the JSON (and no column an editor shows).
  const text = written.charCodeAt(0) === 0xfeff ? written.slice(1) : written;
  const oneLine = !text.includes('\n');
  const placeOf = (p: Place): string => (oneLine ? `column ${p.column}` : `line ${p.line}, column ${p.column}`);
  /** Findings with where they are in the text, said in that order (a key given twice is known only at its object's end). */
  const errors: { offset: number; finding: Finding }[] = [];
  const warnings: Finding[] = [];
  /** Each open object: where each of its names is, and its own path once a name comes twice. */
  const objects: { names: Map<string, (Place & { offset: number })[]>; path?: (string | number)[] }[] = [];
  visit(
    text,
    {
      onObjectBegin: () => {
        objects.push({ names: new Map() });
      },
      onObjectProperty: (name, offset, _length, line, character, pathSupplier) => {
        const object = objects[objects.length - 1]!;
        const place = { line: line + 1, column: character + 1, offset };
        const places = object.names.get(name);
        if (places === undefined) {
          object.names.set(name, [place]);
          return;
        }
        places.push(place);
        object.path ??= pathSupplier();
      },
      onObjectEnd: () => {
        const object = objects.pop()!;
        if (object.path === undefined) return;
        for (const [name, places] of object.names) {
          if (places.length < 2) continue;
          const times = places.length === 2 ? 'twice' : `${places.length} times`;
          const others = places.slice(0, -1).map(placeOf).join(' and ');
          errors.push({
            offset: places[places.length - 1]!.offset,
            finding: {
              path: pointer(at, ...object.path, name),
              rule: DUPLICATE_KEY_RULE,
              message: `${quote(name)} is given ${times} in this object (also at ${others}): a JSON reader keeps only one, and readers differ in which`,
              hint: `Keep one ${quote(name)}: merge the others into it or remove them (this registry would read the last one, other readers the first).`,
            },
          });
        }
      },
      onLiteralValue: (value: unknown, offset, length, _line, _character, pathSupplier) => {
        if (typeof value !== 'number') return;
        const literal = text.slice(offset, offset + length);
        if (!Number.isFinite(value)) {
          errors.push({ offset, finding: outOfRange(pointer(at, ...pathSupplier()), value, literal) });
        } else if (length >= LONG_MANTISSA || /[eE][+-]?\d{3}/.test(literal)) {
          const read = String(value);
          if (decimal(literal) !== decimal(read)) warnings.push(rounded(pointer(at, ...pathSupplier()), literal, read, value === 0));
        }
      },
    },
    { disallowComments: true, allowTrailingComma: false },
  );
  return { errors: errors.sort((a, b) => a.offset - b.offset).map((e) => e.finding), warnings };
}

/** The non-finite numbers of a value, with their paths. */
function unheldNumbers(root: unknown, at: string): { path: string; value: number }[] {
  const found: { path: string; value: number }[] = [];
  const stack: [unknown, string][] = [[root, at]];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) found.push({ path, value: node });
    } else if (Array.isArray(node)) {
      // Pushed last first, so that they are taken in order: the findings follow the document.
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], pointer(path, i)]);
    } else if (typeof node === 'object' && node !== null && !ArrayBuffer.isView(node)) {
      const keys = Object.keys(node);
      for (let i = keys.length - 1; i >= 0; i--) stack.push([(node as JsonObject)[keys[i]!], pointer(path, keys[i]!)]);
    }
  }
  return found;
}

/** A long number as messages show it (a number thousands of digits long is cut). */
const shown = (literal: string): string => (literal.length > 40 ? `${literal.slice(0, 39)}…` : literal);

/**
 * Why a number cannot be stored: past a double's range (written `literal`, when the text is at
 * hand), or NaN, which only a protobuf Struct carries.
 */
function outOfRange(path: string, value: number, literal: string | undefined): Finding {
  if (Number.isNaN(value)) return { path, rule: OUT_OF_RANGE_RULE, message: 'NaN is not a number JSON can hold: write a number, or a string' };
  const what = literal === undefined ? (value > 0 ? 'this number' : 'this negative number') : shown(literal);
  const message =
    value > 0
      ? `${what} is beyond the largest number JSON here can hold (about 1.8e308): write a smaller number or a string`
      : `${what} is beyond the smallest number JSON here can hold (about -1.8e308): write a number nearer zero, or a string`;
  return { path, rule: OUT_OF_RANGE_RULE, message };
}

/** A number read as another (`read`): its digits past a double's precision, or `underflow`, nearer zero than a double can be. */
function rounded(path: string, literal: string, read: string, underflow: boolean): Finding {
  const why = underflow ? 'it is nearer zero than the smallest number JSON here can hold (about 5e-324)' : 'JSON numbers here are IEEE 754 doubles, exact to about 16 significant digits';
  return {
    path,
    rule: ROUNDED_RULE,
    message: `${shown(literal)} is read as ${read}: ${why}`,
    hint: `The registry stores and serves ${read}. Write it as a string ("${shown(literal)}") if its exact digits matter, as an id's do.`,
  };
}

/**
 * A number's decimal value, spelled one way: its significant digits and exponent ("12e3" and
 * "12000" are both "12e3"), so that two spellings of one value compare equal.
 */
function decimal(literal: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!m) return literal;
  const fraction = m[3] ?? '';
  const digits = (m[2]! + fraction).replace(/^0+/, '');
  if (digits === '') return '0'; // -0 is 0: JSON writes no negative zero
  const significant = digits.replace(/0+$/, '');
  const exponent = Number(m[4] ?? '0') - fraction.length + (digits.length - significant.length);
  return `${m[1]}${significant}e${exponent}`;
}
