/**
 * What the CLI prints, for a terminal and for a script: colour only on a TTY (stdout and stderr
 * each for itself) and never with NO_COLOR, `--json` documents on stdout, one-line failures on
 * stderr, and the exit codes every command shares. Everything written goes through `forTerminal`
 * (./terminal-text.ts): text from the registry or a document never writes a control character to
 * the terminal.
 */
import type { Finding } from '../contract/types.js';
import { RegistryDeclined, RegistryUnreachable, type RegistryProtocolError } from './connection.js';
import type { SourceLocation } from './json-source.js';
import { forTerminal, sgrMarker, terminalSafe } from './terminal-text.js';

export const EXIT_OK = 0;
/** The command ran and something was wrong: the registry declined, or a file it read is the wrong one (invalid, not a registry's database). */
export const EXIT_FAILED = 1;
/** Unknown option, missing argument, a value out of range, a file that cannot be read (not there, a folder, permission). */
export const EXIT_USAGE = 2;
/** The registry could not be reached: connection refused, DNS, timeout, no registry at the URL. */
export const EXIT_UNREACHABLE = 3;

/**
 * How the command ends when its reader goes away (`a2a-registry search x | head -1`,
 * `a2a-registry watch ... | grep -m1 added`): by default at once with status 0, as Unix tools stop
 * quietly. A command with something to undo first (a watch open on the registry) sets its own
 * ending, which exits once that is done.
 */
let endOnClosedPipe: () => void = () => process.exit(EXIT_OK);

export function onClosedPipe(end: () => void): void {
  endOnClosedPipe = end;
}

export function closedPipe(): void {
  endOnClosedPipe();
}

/**
 * For a command that changes something as it prints (import, migrate's progress): a reader that
 * goes away (`a2a-registry import cards/ 2>&1 | head`) stops it as Unix tools stop, but not as a
 * success (exit 0 said every document was stored): its outcome if it had one, otherwise 1.
 */
export function failOnClosedPipe(): void {
  onClosedPipe(() => process.exit(typeof process.exitCode === 'number' ? process.exitCode : EXIT_FAILED));
}

export interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Whether to paint (styles()): stdout or stderr shows colour; each writer drops the colours where its stream does not. */
  color: boolean;
  /**
   * Terminal width when stdout is a TTY (0 when it does not say); undefined for pipes and files,
   * where tables print every cell whole.
   */
  columns?: number;
  /**
   * The command's --json output is JSON lines (`watch`): every document, a failure's included, is
   * one line, or a reader taking a line at a time gets a fragment of one.
   */
  jsonLines?: boolean;
  /**
   * Resolves once what was written has gone out far enough to write more. Writes to a pipe are
   * queued in memory until its reader takes them: a command that prints without end (import's
   * refusals) waits for this, or a reader slower than the command (`2>&1 | less`, a log shipper)
   * had it hold everything it printed. Absent: nothing to wait for.
   */
  drained?: () => Promise<void>;
}

/** Whether `stream` shows the CLI's colours: a terminal, without NO_COLOR, that is not TERM=dumb. */
const showsColour = (stream: NodeJS.WriteStream): boolean => stream.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';

export function defaultOutput(): Output {
  const tty = process.stdout.isTTY === true;
  // Each stream for itself: `2>errors.log` from a terminal wrote the escape sequences of stdout's
  // colours into the log, and `--json > out.json` left the failure on the terminal uncoloured.
  const colourOut = showsColour(process.stdout);
  const colourErr = showsColour(process.stderr);
  return {
    out: (s) => process.stdout.write(forTerminal(s, colourOut)),
    err: (s) => process.stderr.write(forTerminal(s, colourErr)),
    color: colourOut || colourErr,
    columns: tty ? (process.stdout.columns ?? 0) : undefined,
    drained: async () => {
      await Promise.all([drainOf(process.stdout), drainOf(process.stderr)]);
    },
  };
}

/** Once `stream` takes more writes without queueing them (or is closed: a closed pipe ends the command, see onClosedPipe). */
function drainOf(stream: NodeJS.WriteStream): Promise<void> {
  if (!stream.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.once('drain', done);
    stream.once('close', done);
  });
}

export interface Styles {
  red: (s: string) => string;
  green: (s: string) => string;
  yellow: (s: string) => string;
  dim: (s: string) => string;
  bold: (s: string) => string;
}

export function styles(color: boolean): Styles {
  // Markers, not escape sequences yet: `forTerminal` escapes every raw ESC in the text, then makes these real.
  const paint = (code: string) => (s: string) => (color ? `${sgrMarker(code)}${s}${sgrMarker('0')}` : s);
  return { red: paint('31'), green: paint('32'), yellow: paint('33'), dim: paint('2'), bold: paint('1') };
}

export function printJson(o: Output, value: unknown): void {
  o.out(`${o.jsonLines ? JSON.stringify(value) : JSON.stringify(value, null, 2)}\n`);
}

// --- tables --------------------------------------------------------------------------------

export interface Column {
  title: string;
  /**
   * On a terminal, cells longer than this are cut with "…"; the last column is never cut (URLs
   * stay whole). Into a pipe or a file, a longer cell is printed whole, the next column after it.
   */
  width: number;
  /** On a narrow terminal the column may shrink down to this; without it, it keeps its width. */
  min?: number;
}

/** Room the last column (never cut) is expected to need when a table is fitted to a terminal. */
const LAST_COLUMN_ROOM = 40;

/**
 * A table whose widths are fixed up front, so rows can be printed one by one as they stream in
 * instead of after the whole answer has been measured. Given a terminal width, the shrinkable
 * columns give up room (down to their minimum) so that a row fits on one line where it can, and
 * a longer cell is cut. Without one (stdout a pipe or a file), nothing is cut: `ls | grep`, a
 * script or a saved listing gets every name and match whole, the columns aligned up to the first
 * cell longer than its width.
 */
export class Table {
  private readonly columns: Column[];
  private readonly cut: boolean;

  constructor(
    columns: Column[],
    private readonly s: Styles,
    terminalColumns?: number,
  ) {
    this.columns = terminalColumns ? shrink(columns, terminalColumns) : columns;
    this.cut = terminalColumns !== undefined;
  }

  header(): string {
    return `${this.s.bold(this.line(this.columns.map((c) => c.title)))}\n`;
  }

  row(cells: string[]): string {
    return `${this.line(cells)}\n`;
  }

  private line(cells: string[]): string {
    const last = this.columns.length - 1;
    return this.columns
      .map((c, i) => (i === last ? (cells[i] ?? '') : fit(cells[i] ?? '', c.width, this.cut)))
      .join('  ')
      .trimEnd();
  }
}

function shrink(columns: Column[], terminalColumns: number): Column[] {
  const fixed = columns.slice(0, -1);
  let excess = fixed.reduce((n, c) => n + c.width + 2, 0) + LAST_COLUMN_ROOM - terminalColumns;
  if (excess <= 0) return columns;
  const out = columns.map((c) => ({ ...c }));
  // Take from the widest shrinkable column first, one character at a time: simple, and tables are small.
  while (excess > 0) {
    const widest = out.slice(0, -1).filter((c) => c.min !== undefined && c.width > c.min).sort((a, b) => b.width - a.width)[0];
    if (!widest) break;
    widest.width--;
    excess--;
  }
  return out;
}

/**
 * Pads or cuts to exactly `width` terminal columns, counting a control character as the `\u001b`
 * it is shown as; with `cut` false, only pads (a longer text stays whole). Counted in columns, not
 * UTF-16 units: a Chinese, Japanese or Korean name takes two columns a character, an accent
 * written as a combining mark none, so such names pushed the columns after them out of line, and
 * a cut could split an emoji into half a surrogate pair (shown as U+FFFD).
 */
export function fit(text: string, width: number, cut = true): string {
  const flat = terminalSafe(text.replace(/\s+/g, ' '));
  let used = 0;
  for (const { segment } of graphemes.segment(flat)) used += clusterColumns(segment);
  if (cut && used > width) {
    let out = '';
    used = 0;
    for (const { segment: c } of graphemes.segment(flat)) {
      const w = clusterColumns(c);
      if (used + w > width - 1) break;
      out += c;
      used += w;
    }
    return `${out}…${' '.repeat(width - 1 - used)}`;
  }
  return flat + ' '.repeat(Math.max(0, width - used));
}

/** Characters a terminal shows in no column: combining marks, variation selectors, zero-width joiners and other format characters. */
const NO_COLUMN = /^[\p{M}\p{Cf}]$/u;
/**
 * Characters a terminal shows in two columns (East Asian Wide and Fullwidth, Unicode's UAX #11):
 * Hangul Jamo, CJK radicals to Yi (kana, ideographs, Hangul syllables, compatibility ideographs,
 * full-width forms) and the ideographs of the supplementary planes; and emoji shown as emoji.
 */
const TWO_COLUMNS =
  /^(?:[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{1b000}-\u{1b2ff}\u{20000}-\u{3fffd}]|\p{Emoji_Presentation})$/u;
const columnsOf = (c: string): number => (NO_COLUMN.test(c) ? 0 : TWO_COLUMNS.test(c) ? 2 : 1);
/**
 * The columns of one grapheme cluster (what a terminal draws as one character): those of its
 * widest code point. Counted code point by code point, an emoji sequence joined by zero-width
 * joiners (👨‍👩‍👧, three emoji) counted 6 and a flag (two regional indicators) 4 where terminals
 * show 2, so the columns after them came out of line; and a cut could split one.
 */
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const clusterColumns = (cluster: string): number => {
  let widest = 0;
  for (const c of cluster) widest = Math.max(widest, columnsOf(c));
  return widest;
};

// --- findings and failures -----------------------------------------------------------------

/**
 * A value the user typed on the command line, named as they typed it: an option (`--page-token`,
 * `--mcp-url`) or an argument (`<id>`, `[words...]`).
 */
export interface TypedPlace {
  typed: string;
}

/** Where a finding is in what the user gave: a place in their file, or an option or argument they typed. */
export type Place = SourceLocation | TypedPlace;

/**
 * Where a finding's JSON Pointer is in what the user gave (their file, or their command line), or
 * undefined when the finding is not about anything they gave.
 */
export type Locate = (pointer: string) => Place | undefined;

const isTyped = (place: Place | undefined): place is TypedPlace => place !== undefined && 'typed' in place;

/**
 * The operation arguments a command sends from its options and arguments, each named as the
 * user typed it: `{"/pageToken": "--page-token"}`. A pointer covers what is under it
 * (`/filter/tags` is `/filter/tags/0` too). The registry names a refusal of them where its
 * request has them (`/parts/0/data/list/pageToken`), a message part the user never wrote.
 */
export interface TypedArguments {
  /** The operation the command sends, in a data part of its own ("list", "search", "refresh"). */
  operation: string;
  from: Readonly<Record<string, string>>;
}

/** Places the registry's paths into a command's operation arguments at the option or argument that gave each. */
export function typedArgumentsAt({ operation, from }: TypedArguments): Locate {
  const root = new RegExp(`^/parts/\\d+/data/${operation}(?=/|$)`);
  // Longest first: /filter/owner before /filter.
  const pointers = Object.keys(from).sort((a, b) => b.length - a.length);
  return (path) => {
    const at = root.exec(path);
    if (!at) return undefined;
    const inArguments = path.slice(at[0].length);
    const pointer = pointers.find((p) => inArguments === p || inArguments.startsWith(`${p}/`));
    return pointer === undefined ? undefined : { typed: from[pointer]! };
  };
}

/**
 * A registry's message names a finding by its path ("The \"get\" arguments are not valid:
 * /parts/0/data/get/id: ..."); one the user typed is named as they typed it there too.
 */
export function typedMessage(message: string, findings: readonly Finding[], locate: Locate): string {
  let text = message;
  for (const f of findings) {
    const place = f.path === '' ? undefined : locate(f.path);
    if (!isTyped(place)) continue;
    // The whole path only: /filter/tags is not the start of /filter/tagsets.
    text = text.replace(new RegExp(`${f.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![^\\s:;,.)"])`, 'g'), place.typed);
  }
  return text;
}

/** "card.json:12:7", as compilers print it (editors and terminals make it a link). */
export const formatLocation = (l: SourceLocation): string => (l.line === undefined ? l.file : `${l.file}:${l.line}:${l.column ?? 1}`);

/** One line per finding (and one per hint): `  error   card.json:12:7  /skills/0/name: message [rule]`. */
export function formatFindings(findings: readonly Finding[], label: 'error' | 'warning', s: Styles, locate?: Locate): string {
  const colour = label === 'error' ? s.red : s.yellow;
  const tag = label.padEnd(7);
  let text = '';
  for (const f of findings) {
    const where = locate?.(f.path);
    // A value typed on the command line is named as typed (`--mcp-url: ...`); a place in a file precedes the path.
    const named = isTyped(where) ? where.typed : `${where ? `${s.bold(formatLocation(where))}  ` : ''}${f.path === '' ? '(document)' : f.path}`;
    text += `  ${colour(tag)} ${named}: ${f.message}${f.rule ? s.dim(` [${f.rule}]`) : ''}\n`;
    if (f.hint) text += `  ${' '.repeat(tag.length)} ${s.dim('hint:')} ${f.hint}\n`;
  }
  return text;
}

/**
 * Prints a failed registry call and returns its exit code. With --json the failure is also a
 * document on stdout ({"error": {...}}), so a script reading stdout never gets nothing.
 */
export function reportFailure(
  failure: RegistryDeclined | RegistryUnreachable | RegistryProtocolError,
  o: Output,
  json: boolean,
  locate?: Locate,
  /** Members added to the --json {"error"} document (a watch given up on: its taskId and how to cancel it). */
  extra: Record<string, unknown> = {},
): number {
  const s = styles(o.color);
  if (failure instanceof RegistryDeclined) {
    const error = locate && failure.error.details ? { ...failure.error, message: typedMessage(failure.error.message, failure.error.details, locate) } : failure.error;
    if (json) printJson(o, { error: { ...(locate && error.details ? { ...error, details: error.details.map((d) => withLocation(d, locate)) } : error), ...extra }, state: failure.state });
    let text = `${s.red('declined')} ${s.bold(error.code)}: ${error.message}\n`;
    text += formatFindings(error.details ?? [], 'error', s, locate);
    if (error.retryAfterSeconds !== undefined) text += `  retry after ${error.retryAfterSeconds} s\n`;
    o.err(text);
    return EXIT_FAILED;
  }
  if (failure instanceof RegistryUnreachable) {
    if (json) printJson(o, { error: { code: 'UNREACHABLE', message: failure.message, ...extra } });
    o.err(`a2a-registry: ${failure.message}\n`);
    return EXIT_UNREACHABLE;
  }
  if (json) printJson(o, { error: { code: 'PROTOCOL_ERROR', message: failure.message, ...extra } });
  o.err(`a2a-registry: the registry answered with an error: ${failure.message}\n`);
  return EXIT_FAILED;
}

/**
 * A finding for --json readers: with its `location` ({file, line, column}) when it points into a
 * file; at the option or argument as typed (its `path` "--page-token") when it came from one.
 */
export function withLocation<F extends Finding>(f: F, locate: Locate): F & { location?: SourceLocation } {
  const place = locate(f.path);
  if (isTyped(place)) return { ...f, path: place.typed };
  return place ? { ...f, location: place } : f;
}

/** "1 entry", "2 entries", "1,000 documents": a count with its noun, singular or plural as it is. */
export function countOf(n: number, singular: string, plural = `${singular}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? singular : plural}`;
}

/**
 * A usage problem found by a command itself (a file that cannot be read, a missing option):
 * one line on stderr, an {"error"} document on stdout with --json, exit code 2.
 */
export function reportUsage(o: Output, json: boolean, code: 'USAGE' | 'READ_ERROR', message: string): number {
  if (json) printJson(o, { error: { code, message } });
  o.err(`a2a-registry: ${message}\n`);
  return EXIT_USAGE;
}
