/**
 * Turns an incoming A2A message into exactly one operation of the contract, or declines it with
 * BAD_REQUEST and a message that says what a valid request looks like. This is the edge where the
 * SDK's message type meets the contract: nothing past it sees parts.
 */
import type { Message, Part } from '@a2a-js/sdk';
import type { z } from 'zod';
import type { Finding } from '../contract/types.js';
import { nestsDeeperThan } from '../lib/json-depth.js';
import { codePointLength, codePointPrefix } from '../lib/code-points.js';
import { isObject, quote } from '../lib/json.js';
import { keysAt } from './schema-keys.js';
import { schemaAt, valueAt } from '../lib/zod-paths.js';
import { issueMessage } from '../lib/issue-words.js';
import { compactJsonBytes } from '../validation/size.js';
import { sizeAdvice, tooLargeFinding } from '../validation/verdict.js';
import { detectKind, misshapenDocument } from '../validation/document-shape.js';
import { RegistryError, badRequest } from '../contract/errors.js';
import { MAX_NAMED, moreFindings, namedList } from '../contract/findings.js';
import type { MessageEncoding } from '../contract/binding.js';
import type { Subject } from '../contract/subject.js';
import type { DocumentReference } from '../contract/freshness.js';
import { OPERATION_NAMES, type Operation, type OperationName } from './operation.js';
import { partWords, type MessageGeneration, type PartWords } from './part-words.js';
import {
  documentOperationSchema,
  getSchema,
  issueFindings,
  listSchema,
  refreshSchema,
  searchSchema,
  watchSchema,
  unregisterSchema,
} from './request-schemas.js';

export interface ParserLimits {
  maxDocumentBytes: number;
  /** Deepest nesting of an uploaded document: deeper ones could be stored but never read back (the SDK recurses). */
  maxJsonDepth?: number;
  /** Longest search query: a longer `query` is BAD_REQUEST; a longer text-only message is cut (default 1,000). */
  maxQueryChars?: number;
}

/**
 * The limits, the generation of the request (default v1.0) and how its binding encodes it
 * (default JSON): its error messages name its parts as that generation writes them on that
 * binding (part-words.ts).
 */
export interface ParseOptions extends ParserLimits {
  generation?: MessageGeneration;
  encoding?: MessageEncoding;
}

const wordsFor = (options: ParseOptions): PartWords => partWords(options.generation, options.encoding);

const DEFAULT_MAX_QUERY_CHARS = 1000;

/** 'mcp-server': a whole MCP server document ({"mcpServer", "toolspec"}, what `get --document` and the CLI's `register` take). */
type FileKind = 'agent-card' | 'toolspec' | 'mcp-server';
interface UploadedFile {
  kind: FileKind;
  text: string;
  value: unknown;
  sizeBytes: number;
  index: number;
  /** 'File part 0 ("mcp.json")', for messages. */
  label: string;
}

const JSON_MEDIA_TYPES = new Set(['', 'application/json', 'text/json', 'application/a2a+json']);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Zod issues as findings whose paths start at `base` (a JSON Pointer), in plain words
 * (issue-words.ts: which field, what it takes, what was sent), for every door at once. With the
 * schema, an unknown key's finding also names the keys accepted there (`hint`).
 */
export function zodFindings(error: z.ZodError, base: string, schema?: z.ZodType, input?: unknown): Finding[] {
  const issues = withoutSafeIntegerRange(error.issues);
  const pathOf = (issue: z.core.$ZodIssue): string => [base, ...issue.path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1'))].join('/');
  const findings = issues.slice(0, MAX_ARGUMENT_FINDINGS).map((issue) => issueFinding(issue, base, pathOf(issue), schema, input));
  // The rest counted (contract/findings.ts), not dropped unsaid: 40 values of the wrong type were 20 findings, as if all.
  const first = issues[MAX_ARGUMENT_FINDINGS];
  if (first) findings.push(moreFindings(pathOf(first), issues.length - MAX_ARGUMENT_FINDINGS, MAX_ARGUMENT_FINDINGS));
  return findings;
}

/**
 * Findings of a request's arguments a refusal lists at most, each in its message too (findingsSaid),
 * fewer than a document's MAX_FINDINGS: then one saying how many more.
 */
const MAX_ARGUMENT_FINDINGS = 20;

/** One zod issue as a finding at `path` (under `base`), in the registry's words. */
function issueFinding(issue: z.core.$ZodIssue, base: string, path: string, schema: z.ZodType | undefined, input: unknown): Finding {
  // A schema that words its own issues (a pageToken's, with the rule of every unusable token).
  const own = schema && ownFinding(schema, issue);
  if (own) return { path, ...own };
  if (issue.code !== 'unrecognized_keys') {
    const value = valueAt(input, issue.path);
    const message = issueMessage(issue, [...base.split('/'), ...issue.path.map(String)], schema && schemaAt(schema, issue.path), value);
    const hint = input === undefined ? undefined : valueHint(issue, value);
    return hint ? { path, message, hint } : { path, message };
  }
  const message = unrecognizedKeys(issue);
  const accepted = schema && keysAt(schema, issue.path);
  if (!accepted) return { path, message };
  // An object that takes no key ({"renew": {}}) says so, rather than an empty list.
  return { path, message, hint: accepted.length > 0 ? `Accepted keys here: ${accepted.join(', ')}.` : 'Accepted keys here: none; send an empty object, {}.' };
}

/**
 * Zod's message of unknown keys (`Unrecognized key: "limit"`), which names every key in full: one
 * past MAX_NAMED keys, or with a key past 60 characters, says the first ones, clipped, and how many
 * more (findings.ts), where 6,000 keys sent were named back, twice. An older zod wording that did
 * not name them gets them added, once.
 */
function unrecognizedKeys(issue: z.core.$ZodIssueUnrecognizedKeys): string {
  const names = issue.keys.map((key) => quote(key, 60));
  const whole = issue.keys.length <= MAX_NAMED && issue.keys.every((key, i) => names[i] === JSON.stringify(key));
  if (whole && issue.keys.every((key) => issue.message.includes(JSON.stringify(key)))) return issue.message;
  const named = namedList(names);
  return `Unrecognized key${issue.keys.length === 1 ? '' : 's'}: ${named}`;
}

/** A size issue: too big or too small, and of what (zod's `origin`: "number", "int", "string", "array"...). */
const isSizeIssue = (issue: z.core.$ZodIssue): issue is z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall => issue.code === 'too_big' || issue.code === 'too_small';

/**
 * The issues without the safe-integer range's where the schema's own bound says the same: zod's
 * int() holds every integer within ±(2^53 - 1), so a pageSize or limit of 1e300 broke that range
 * and the schema's bound (<= 100) at once, and was told both at one path, the first "Too big:
 * expected int to be <=9007199254740991", a bound no documentation names. A value past the range
 * where the schema has no bound of its own (a revision) keeps the range's issue: it is the only one.
 */
function withoutSafeIntegerRange(issues: readonly z.core.$ZodIssue[]): readonly z.core.$ZodIssue[] {
  const at = (issue: z.core.$ZodIssue): string => `${issue.code} ${JSON.stringify(issue.path.map(String))}`;
  const bounded = new Set(issues.filter((issue) => isSizeIssue(issue) && issue.origin !== 'int').map(at));
  return issues.filter((issue) => !(isSizeIssue(issue) && issue.origin === 'int' && bounded.has(at(issue))));
}

/** The finding the schema at `issue`'s path makes of it (request-schemas.ts issueFindings), if it makes one. */
function ownFinding(schema: z.ZodType, issue: z.core.$ZodIssue): Omit<Finding, 'path'> | undefined {
  const at = schemaAt(schema, issue.path);
  return at && issueFindings.get(at)?.finding(issue);
}

/**
 * How to write the value the way the schema takes it, for the mistakes JSON makes easy: one
 * value where a list is taken ("tags": "finance"), a number where a string is ("protocolVersion":
 * 1.0 is the number 1), a boolean in quotes ("streaming": "true"), an empty list.
 */
function valueHint(issue: z.core.$ZodIssue, value: unknown): string | undefined {
  if (issue.code === 'invalid_type') {
    const scalar = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
    if (issue.expected === 'array' && scalar) return `Give a list: ${quote([value])}.`;
    if (issue.expected === 'string' && typeof value === 'number') {
      // A version written 1.0 reached us as 1: name the string meant.
      const version = Number.isInteger(value) && /version$/i.test(String(issue.path[issue.path.length - 1] ?? ''));
      return `Give it as a string, in quotes: ${quote(String(value))}${version ? ` (or "${value}.0": JSON reads ${value}.0 as the number ${value})` : ''}.`;
    }
    if (issue.expected === 'boolean' && (value === 'true' || value === 'false')) return `Write ${value} without quotes.`;
    if (issue.expected === 'number' && typeof value === 'string' && /^\d{1,9}$/.test(value.trim())) return `Write ${value.trim()} without quotes.`;
  }
  if (issue.code === 'too_small' && issue.origin === 'array' && Array.isArray(value) && value.length === 0) return 'Give at least one value, or leave the key out where it is optional.';
  return undefined;
}

/** Findings as one sentence's clauses: "path: message (hint)", joined by "; " ("/" for the root). */
export const findingsSaid = (details: readonly Finding[]): string =>
  details.map((d) => `${d.path || '/'}: ${d.message}${d.hint ? ` (${d.hint.replace(/\.$/, '')})` : ''}`).join('; ');

/** Where an operation's arguments sit in a message (`/parts/0/data/search`, as `words` has it): error paths start here. */
const argumentsPath = (words: PartWords, op: OperationName, partIndex: number) => `${words.dataAt(partIndex)}/${op}`;

/**
 * Where the message's `op` has its arguments (`/parts/0/data/search`, as `words` writes parts),
 * for findings the registry makes of them while running (a pageToken, a refresh's id), which it
 * names relative to the arguments (contract/errors.ts ArgumentsRefusal); undefined
 * when no data part holds it (an uploaded document alone). A message carries one operation.
 */
export function operationArgumentsPath(message: Message | undefined, op: OperationName, words: PartWords = partWords()): string | undefined {
  const index = (message?.parts ?? []).findIndex((part) => part.content?.$case === 'data' && isObject(part.content.value) && Object.hasOwn(part.content.value, op));
  return index < 0 ? undefined : argumentsPath(words, op, index);
}

/**
 * The most common register mistake: the card (or toolspec) sent as the arguments themselves,
 * without the key that says what it is. Its keys are then "unrecognized"; the hint says how to wrap it.
 */
function registerWrapperHint(op: OperationName, value: unknown): string | undefined {
  if (op !== 'register' || !isObject(value)) return undefined;
  if (Array.isArray(value.tools)) return 'This is an MCP toolspec: send it as {"register": {"toolspec": {"tools": [...]}, "mcpServer": {"name": ..., "url": ...}}}.';
  const card = Array.isArray(value.supportedInterfaces) || Array.isArray(value.skills) || (typeof value.protocolVersion === 'string' && typeof value.url === 'string');
  return card ? 'This is an agent card: send it as {"register": {"agentCard": {...}}}.' : undefined;
}

function parseArgs<T>(schema: z.ZodType<T>, value: unknown, op: OperationName, base: string): T {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) {
    const wrap = registerWrapperHint(op, value);
    const details = zodFindings(parsed.error, base, schema, value ?? {}).map((d) => (wrap && d.path === base ? { ...d, hint: wrap } : d));
    throw badRequest(`The "${op}" arguments are not valid: ${findingsSaid(details)}.`, details);
  }
  return parsed.data;
}

/** What a JSON value that is not an object is, for a refusal: "an array of 2 values", "a string". */
function jsonKindOf(value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : `an array of ${value.length.toLocaleString('en-US')} value${value.length === 1 ? '' : 's'}`;
  return value === null ? 'null' : `a ${typeof value}`;
}

function fileKindOf(part: Part, value: unknown, label: string, words: PartWords): FileKind {
  // What it holds says, whatever its name, as the CLI reads a file: a whole MCP server document was
  // read as an agent card (UNSUPPORTED_VERSION, eight findings of a card's members) or, as
  // toolspec.json, as a toolspec without "tools" (its server beside the one the data part gave).
  const kind = detectKind(value);
  if (kind === 'mcp-server') return 'mcp-server';
  const name = part.filename.toLowerCase();
  if (name.endsWith('agent-card.json') || name.endsWith('agent.json')) return 'agent-card';
  if (name.endsWith('toolspec.json')) return 'toolspec';
  // Unnamed uploads: a toolspec is {"tools": [...]} and nothing else a card would have.
  if (isObject(value) && Array.isArray(value.tools) && !('name' in value)) return 'toolspec';
  if (isObject(value)) return 'agent-card';
  // Not an object: no name makes it a document (it was told to name it agent-card.json or
  // toolspec.json, and was then refused as no object). What it should be instead, as the CLI's
  // import tells an array (cli/import-preparation.ts arrayRefusal).
  if (kind === 'mcp-toolspec') {
    throw badRequest(
      `${label} holds a bare list of tools (a JSON array); a toolspec is an object: wrap the list as {"tools": [...]}, as tools/list returns it, and send it beside ${words.dataPartWith('{"register": {"mcpServer": {"name": "...", "url": "https://..."}}}')}.`,
    );
  }
  const what = `${label} holds ${jsonKindOf(value)}, not a document: a file part carries one JSON object, an agent card, an MCP server document ({"mcpServer": {...}, "toolspec": {...}}) or a toolspec ({"tools": [...]}).`;
  if (!Array.isArray(value) || value.length === 0) throw badRequest(`${what} Check that the file is the document meant.`);
  // Its name in a shell command when it is a plain one (a name with spaces or quotes would need quoting).
  const file = /^[\w.-]+$/.test(part.filename) ? part.filename : 'documents.json';
  throw badRequest(`${what} To register the documents the array holds, send each in a message of its own (jq -c '.[]' ${file} writes them one per line; the registry's operator can load such a file whole with a2a-registry import).`);
}

/**
 * The compact JSON size of an oversized upload, or undefined when it is not JSON: a
 * pretty-printed file that fits minified is told so, as the CLI tells it for the same file.
 * The request body limit bounds this work; the depth check keeps parsing safe.
 */
function compactBytesOf(raw: Buffer, maxJsonDepth: number | undefined): number | undefined {
  if (maxJsonDepth !== undefined && nestsDeeperThan(raw, maxJsonDepth)) return undefined;
  try {
    const text = utf8.decode(raw);
    return compactJsonBytes(JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text));
  } catch {
    return undefined;
  }
}

function readFile(part: Part, raw: Buffer, index: number, limits: ParseOptions): UploadedFile {
  const words = wordsFor(limits);
  const mediaType = part.mediaType.toLowerCase().split(';')[0]!.trim();
  if (!JSON_MEDIA_TYPES.has(mediaType)) {
    // The SDK maps v0.3's file.mimeType to mediaType: named as the client sent it.
    throw badRequest(`File part ${index} has ${words.mediaType} "${part.mediaType}"; documents must be "application/json".`);
  }
  if (raw.length > limits.maxDocumentBytes) {
    const label = `uploaded document "${part.filename || `part ${index}`}"`;
    const { message, hint } = sizeAdvice(label, raw.length, limits.maxDocumentBytes, compactBytesOf(raw, limits.maxJsonDepth));
    throw new RegistryError('TOO_LARGE', message, [tooLargeFinding(words.fileBytesAt(index), raw.length, limits.maxDocumentBytes, hint)]);
  }
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw badRequest(`File part ${index} is not valid UTF-8 text; ${words.bytesAdvice}.`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // tolerate a byte-order mark
  if (limits.maxJsonDepth !== undefined && nestsDeeperThan(raw, limits.maxJsonDepth)) {
    throw new RegistryError(
      'TOO_LARGE',
      `The uploaded document "${part.filename || `part ${index}`}" nests deeper than ${limits.maxJsonDepth} levels; agent cards and toolspecs need a handful. Flatten it, then send it again.`,
      [{ path: words.fileBytesAt(index), message: `nested deeper than ${limits.maxJsonDepth} levels` }],
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RegistryError('VALIDATION_FAILED', `File part ${index} ("${part.filename}") is not valid JSON: ${(err as Error).message}.`, [
      { path: '', message: 'not valid JSON', hint: 'Check the file with a JSON linter; trailing commas and comments are not allowed.' },
    ]);
  }
  // Half an MCP server document, or its tools beside its server, whatever the file's name: told
  // as the CLI tells such a file (validation/document-shape.ts). Half of one was read as an agent
  // card (UNSUPPORTED_VERSION and eight findings of a card's members, none the one missing), and
  // tools beside a server as a toolspec, stored with "mcpServer" inside it.
  const misshapen = misshapenDocument(value);
  const label = part.filename ? `File part ${index} ("${part.filename}")` : `File part ${index}`;
  if (misshapen) throw new RegistryError('VALIDATION_FAILED', `${label}: ${misshapen.message}`, misshapen.details);
  return { kind: fileKindOf(part, value, label, words), text, value, sizeBytes: raw.length, index, label };
}

/**
 * The compact JSON of an inline document, refused when it nests deeper than the limit. Over HTTP
 * the body's own depth check already bounds it; this keeps the parser safe on its own (a value
 * nested thousands deep would make JSON.stringify throw RangeError, and be unreadable once stored).
 */
function inlineText(document: unknown, limits: ParserLimits, path: string): string {
  const tooDeep = () =>
    new RegistryError('TOO_LARGE', `The document nests deeper than ${limits.maxJsonDepth ?? 'the supported number of'} levels; agent cards and toolspecs need a handful. Flatten it, then send it again.`, [
      { path, message: 'nested too deeply' },
    ]);
  let text: string;
  try {
    text = JSON.stringify(document) ?? 'null';
  } catch (err) {
    if (err instanceof RangeError) throw tooDeep();
    throw err;
  }
  if (limits.maxJsonDepth !== undefined && nestsDeeperThan(text, limits.maxJsonDepth)) throw tooDeep();
  return text;
}

/**
 * The size of an inline document's compact JSON (`text`), refused past the limit at the
 * document's own place in the request, as a file part's bytes are (readFile): the same rule and
 * words, each at its part. Left to the validator, it was said of the document's root (path ""),
 * with other words than a file part's.
 */
function inlineSize(text: string, label: string, limits: ParserLimits, path: string): number {
  const sizeBytes = Buffer.byteLength(text);
  if (sizeBytes > limits.maxDocumentBytes) {
    const { message, hint } = sizeAdvice(label, sizeBytes, limits.maxDocumentBytes);
    throw new RegistryError('TOO_LARGE', message, [tooLargeFinding(path, sizeBytes, limits.maxDocumentBytes, hint)]);
  }
  return sizeBytes;
}

function inlineSubject(
  args: z.infer<typeof documentOperationSchema>,
  file: UploadedFile | undefined,
  op: OperationName,
  base: string,
  limits: ParseOptions,
): Subject {
  const hasCard = args.agentCard !== undefined;
  const hasMcp = args.mcpServer !== undefined || args.toolspec !== undefined;
  if (hasCard && (hasMcp || file)) {
    throw badRequest(`"${op}" carries more than one document: send either an agentCard, or an mcpServer with its toolspec.`, [
      { path: `${base}/agentCard`, message: 'a second document' },
    ]);
  }
  if (hasCard) {
    const documentText = inlineText(args.agentCard, limits, `${base}/agentCard`);
    return { type: 'agent-card', card: args.agentCard, documentText, sizeBytes: inlineSize(documentText, 'agent card', limits, `${base}/agentCard`) };
  }
  if (file?.kind === 'agent-card') {
    if (hasMcp) throw badRequest(`An agent-card.json file cannot be registered with mcpServer metadata; send the card alone.`);
    return { type: 'agent-card', card: file.value, documentText: file.text, sizeBytes: file.sizeBytes, written: { text: file.text, at: '' } };
  }
  if (file?.kind === 'mcp-server' && isObject(file.value)) {
    if (hasMcp) {
      const key = args.mcpServer !== undefined ? 'mcpServer' : 'toolspec';
      throw badRequest(
        `${file.label} is a whole MCP server document, with its own "mcpServer" and "toolspec": leave "${key}" out of the "${op}" arguments (${wordsFor(limits).dataPartWith(`{"${op}": {}}`)}), or send its "toolspec" alone as toolspec.json beside {"${op}": {"mcpServer": {...}}}.`,
        [{ path: `${base}/${key}`, message: 'given twice: in the file part and here' }],
      );
    }
    // As the CLI's import reads such a file: the toolspec's compact serialisation is stored, the
    // file's text checked for what only it shows (a key given twice, a number rounded).
    const { mcpServer: server, toolspec } = file.value;
    return { type: 'mcp-server', server, toolspec, toolspecText: JSON.stringify(toolspec), sizeBytes: file.sizeBytes, written: { text: file.text, at: '' } };
  }
  if (file?.kind === 'toolspec' && args.toolspec !== undefined) {
    throw badRequest(`The toolspec came twice: as toolspec.json and inline. Send one.`);
  }
  const toolspec = file ? file.value : args.toolspec;
  if (toolspec === undefined) {
    const needs = args.mcpServer !== undefined ? 'a "toolspec" ({"tools": [...]})' : 'a document';
    throw badRequest(`"${op}" needs ${needs}. ${wordsFor(limits).requestShapes}`, [{ path: base, message: `missing ${needs}` }]);
  }
  if (args.mcpServer === undefined && op === 'register') {
    throw badRequest(
      'Registering an MCP server needs its metadata: {"register": {"mcpServer": {"name": "...", "url": "https://..."}, "toolspec": {...}}}.',
      [{ path: `${base}/mcpServer`, message: 'required' }],
    );
  }
  const toolspecText = file ? file.text : inlineText(toolspec, limits, `${base}/toolspec`);
  const sizeBytes = file ? file.sizeBytes : inlineSize(toolspecText, 'toolspec', limits, `${base}/toolspec`);
  if (args.mcpServer !== undefined) inlineText(args.mcpServer, limits, `${base}/mcpServer`); // stored beside the toolspec: same bound
  return {
    type: 'mcp-server',
    server: args.mcpServer,
    toolspec,
    toolspecText,
    sizeBytes,
    ...(file ? { written: { text: file.text, at: '/toolspec' } } : {}),
  };
}

/**
 * A search query longer than REGISTRY_MAX_QUERY_CHARS is BAD_REQUEST, on every door. `path`
 * points at the query; `op` is what it came with, as the request's other argument errors name
 * it: the operation (a watch's query is a search's), or the MCP tool called (`search_agents`).
 */
export function checkQueryLength(query: string | undefined, maxQueryChars: number | undefined, path: string, op = 'search'): void {
  const max = maxQueryChars ?? DEFAULT_MAX_QUERY_CHARS;
  // Characters as code points, as the MCP tools' published maxLength counts them (an emoji is one).
  const chars = query === undefined ? 0 : codePointLength(query);
  if (chars > max) {
    // The finding in the message's words: it said zod's "Too big: expected string to have
    // <=1000 characters", where every other finding of the arguments is in the registry's.
    const message = `the query is ${chars} characters; the limit is ${max} (REGISTRY_MAX_QUERY_CHARS)`;
    throw badRequest(`The "${op}" arguments are not valid: ${path}: ${message}.`, [
      { path, message, hint: `Shorten it to at most ${max} characters; an emoji counts as one.` },
    ]);
  }
}

/**
 * The configured limit checked before the schema's: past the schema's ceiling (10,000) a query
 * was told "expected string to have <=10000 characters" while the limit in force was lower.
 */
function checkRawQueryLength(args: unknown, maxQueryChars: number | undefined, path: string, op: 'search' | 'watch'): void {
  if (isObject(args) && typeof args.query === 'string') checkQueryLength(args.query, maxQueryChars, path, op);
}

/**
 * The document of a register or validate given as arguments rather than in a message (other
 * doors: MCP tools), checked exactly as an inline data part is. `at` is the JSON Pointer error
 * paths start from (e.g. "/arguments").
 */
export function documentSubject(args: unknown, op: 'register' | 'validate', limits: ParserLimits, at: string): Subject {
  return inlineSubject(parseArgs(documentOperationSchema, args, op, at), undefined, op, at, limits);
}

/**
 * What a register given as arguments (other doors: MCP tools) stores: the document, checked as
 * an inline data part is, or the reference the registry fetches it from (`url`, `fetchTools`),
 * with the rules of the A2A door.
 */
export function registerSubject(args: unknown, limits: ParserLimits, at: string): Subject | DocumentReference {
  const parsed = parseArgs(documentOperationSchema, args, 'register', at);
  return documentReference(parsed, undefined, 'register', at, limits) ?? inlineSubject(parsed, undefined, 'register', at, limits);
}

/**
 * A register that names where the registry should fetch the document (issue 16), or undefined
 * when the document is given. Only register fetches: validate is open to anyone and stays a
 * check of what the caller sends. `base` is the JSON Pointer of the arguments.
 */
function documentReference(
  args: z.infer<typeof documentOperationSchema>,
  file: UploadedFile | undefined,
  op: OperationName,
  base: string,
  limits: ParserLimits,
): DocumentReference | undefined {
  const byUrl = args.url !== undefined;
  const fetchTools = args.fetchTools === true;
  if (!byUrl && !fetchTools) return undefined;
  const key = byUrl ? 'url' : 'fetchTools';
  if (op !== 'register') {
    throw badRequest(`"validate" checks the document it is sent; "${key}" (fetching the document) goes with "register".`, [
      { path: `${base}/${key}`, message: 'only with register' },
    ]);
  }
  if (byUrl) {
    const others = (['agentCard', 'mcpServer', 'toolspec', 'fetchTools'] as const).filter((k) => args[k] !== undefined);
    if (others.length > 0 || file) {
      throw badRequest('"register" by "url" fetches the agent card from there: send the URL alone, without a document.', [
        { path: `${base}/${others[0] ?? 'url'}`, message: file ? 'a file part beside the URL' : 'beside "url"' },
      ]);
    }
    return { type: 'agent-card-url', url: args.url! };
  }
  if (args.mcpServer === undefined) {
    throw badRequest('"fetchTools" lists the tools of an MCP server: give its metadata, {"mcpServer": {"name": "...", "url": "https://..."}, "fetchTools": true}.', [
      { path: `${base}/mcpServer`, message: 'required' },
    ]);
  }
  if (args.toolspec !== undefined || args.agentCard !== undefined || file) {
    throw badRequest('With "fetchTools": true the registry lists the tools itself: leave out the toolspec.', [
      { path: `${base}/${args.agentCard !== undefined ? 'agentCard' : 'toolspec'}`, message: 'beside "fetchTools"' },
    ]);
  }
  inlineText(args.mcpServer, limits, `${base}/mcpServer`); // stored beside the toolspec: same bound
  return { type: 'mcp-tools', server: args.mcpServer };
}

/** Parses the message into one operation, or throws a BAD_REQUEST (or TOO_LARGE) RegistryError. */
export function parseRequest(message: Message | undefined, limits: ParseOptions): Operation {
  const words = wordsFor(limits);
  const parts = message?.parts ?? [];
  if (parts.length === 0) throw badRequest(`The message has no parts. ${words.requestShapes}`);

  const texts: string[] = [];
  const operations: { name: OperationName; args: unknown; index: number }[] = [];
  const files: UploadedFile[] = [];

  parts.forEach((part, index) => {
    const content = part.content;
    switch (content?.$case) {
      case 'text':
        texts.push(content.value);
        break;
      case 'data': {
        const data: unknown = content.value;
        if (!isObject(data)) throw badRequest(`Data part ${index} is not a JSON object. ${words.requestShapes}`);
        const keys = Object.keys(data);
        if (keys.length === 0) {
          throw badRequest(`Data part ${index} is an empty object: it needs one operation key (${OPERATION_NAMES.join(', ')}). ${words.requestShapes}`, [
            { path: words.dataAt(index), message: 'no operation' },
          ]);
        }
        const known = keys.filter((k): k is OperationName => (OPERATION_NAMES as readonly string[]).includes(k));
        const unknown = keys.filter((k) => !known.includes(k as OperationName));
        // A renewal is no operation of its own: it goes on the open watch's task (message.taskId), which this message did not name.
        if (unknown.length === 1 && unknown[0] === 'renew') {
          throw badRequest(`Data part ${index} is {"renew": ...} without a task: a renewal is sent on the watch it renews, in a message whose taskId is the watch's task id ({"renew": {}}). To start a watch, send {"watch": {...}}.`, [
            { path: `${words.dataAt(index)}/renew`, message: 'renew needs message.taskId' },
          ]);
        }
        if (unknown.length > 0) {
          throw badRequest(`Data part ${index} has unknown key(s) ${namedList(unknown.map((k) => quote(k, 60)))}. ${words.requestShapes}`, [
            { path: `${words.dataAt(index)}/${unknown[0]}`, message: 'unknown operation' },
          ]);
        }
        for (const name of known) operations.push({ name, args: data[name], index });
        break;
      }
      case 'raw':
        files.push(readFile(part, content.value, index, limits));
        break;
      // In the caller's terms: v0.3 has no URL part (its SDK maps a file part with a URI to one)
      // and names a file's bytes and URI in its file part (file.bytes in JSON, file.fileWithBytes over gRPC).
      case 'url':
        throw badRequest(
          limits.generation === 'v0.3'
            ? `Part ${index} is a file part with ${words.fileUri}: the registry does not fetch a file part's URI. Send the document's bytes in ${words.fileBytes} (${words.filePart}) or the document as a data part, or have the registry fetch an agent card with {"register": {"url": "https://..."}}.`
            : `Part ${index} is a URL part. Send the document as a data part or a file part with its bytes, or have the registry fetch an agent card with {"register": {"url": "https://..."}}.`,
        );
      default:
        throw badRequest(words.emptyPart(index));
    }
  });

  if (operations.length > 1) {
    throw badRequest(
      `The message carries ${operations.length} operations (${operations.map((o) => o.name).join(', ')}); send exactly one per message.`,
    );
  }
  if (files.length > 1) throw badRequest(`The message carries ${files.length} files; send one document per message.`);
  const file = files[0];

  const operation = operations[0];
  if (!operation) {
    if (file) {
      if (file.kind === 'toolspec') {
        throw badRequest(
          'A toolspec.json needs its server metadata beside it: a data part {"register": {"mcpServer": {"name": "...", "url": "https://..."}}}, or {"validate": {}} to only check it.',
        );
      }
      return { op: 'register', subject: inlineSubject({}, file, 'register', argumentsPath(words, 'register', file.index), limits) };
    }
    const query = texts.join(' ').trim();
    if (!query) throw badRequest(`The message's text is empty. ${words.requestShapes}`);
    return { op: 'search', request: { query: codePointPrefix(query, limits.maxQueryChars ?? DEFAULT_MAX_QUERY_CHARS) } };
  }

  const { name, args, index } = operation;
  if (file && name !== 'register' && name !== 'validate') {
    throw badRequest(`A file part only goes with register or validate, not with "${name}".`);
  }
  switch (name) {
    case 'register':
    case 'validate': {
      const base = argumentsPath(words, name, index);
      const documentArgs = parseArgs(documentOperationSchema, args, name, base);
      const reference = documentReference(documentArgs, file, name, base, limits);
      if (reference) return { op: 'register', subject: reference };
      return { op: name, subject: inlineSubject(documentArgs, file, name, base, limits) };
    }
    case 'search': {
      checkRawQueryLength(args, limits.maxQueryChars, `${argumentsPath(words, name, index)}/query`, name);
      const request = parseArgs(searchSchema, args, name, argumentsPath(words, name, index));
      checkQueryLength(request.query, limits.maxQueryChars, `${argumentsPath(words, name, index)}/query`);
      return { op: 'search', request };
    }
    case 'watch': {
      checkRawQueryLength(args, limits.maxQueryChars, `${argumentsPath(words, name, index)}/query`, name);
      const request = parseArgs(watchSchema, args, name, argumentsPath(words, name, index));
      checkQueryLength(request.query, limits.maxQueryChars, `${argumentsPath(words, name, index)}/query`, name);
      return { op: 'watch', request };
    }
    case 'get': {
      const { id, revision } = parseArgs(getSchema, args, name, argumentsPath(words, name, index));
      return revision === undefined ? { op: 'get', id } : { op: 'get', id, revision };
    }
    case 'list':
      return { op: 'list', request: parseArgs(listSchema, args, name, argumentsPath(words, name, index)) };
    case 'unregister':
      return { op: 'unregister', id: parseArgs(unregisterSchema, args, name, argumentsPath(words, name, index)).id };
    case 'refresh':
      return { op: 'refresh', id: parseArgs(refreshSchema, args, name, argumentsPath(words, name, index)).id };
  }
}
