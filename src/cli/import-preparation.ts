/**
 * The per-document half of `a2a-registry import`, up to the write: parse each document, detect its
 * kind from its content (as `validate` does), run the checks of a registration (ImportChecks), and
 * say why a refused one is refused, placed in its file (file:line, and the line and column of
 * each finding for a whole-file document). Everything it returns is plain data, so it runs on the
 * main thread or in the import's worker thread (import-worker.ts) alike.
 */
import type { Finding } from '../contract/types.js';
import type { Subject } from '../contract/subject.js';
import type { RegistryError } from '../contract/errors.js';
import type { ImportChecks, PreparedDocument } from '../registry/bulk-import.js';
import { compactJsonBytes } from '../validation/index.js';
import { isObject } from '../lib/json.js';
import { detectKind, misshapenDocument } from './document-kind.js';
import type { SourceDocument } from './import-sources.js';
import { JsonSource, JsonSyntaxError, TEXT_AFTER_VALUE, type SourceLocation, type SourcePosition } from './json-source.js';
import { countOf, withLocation, type Locate } from './output.js';
import { inputName } from './bounded-read.js';

/** How a document read from "-" names its file. */
const STANDARD_INPUT = inputName('-');

/** One refused document, as reported. */
export interface Refusal {
  file: string;
  line?: number;
  code: string;
  message: string;
  details: (Finding & { location?: SourceLocation })[];
}

/** A document ready to store, or why it is not one. */
export type Prepared = { ready: PreparedDocument } | { refusal: Refusal };

/** A document as a registration's subject, or why it cannot be one. */
type Parsed = { subject: Subject } | { refusal: Refusal };

/** Places a JSON Pointer (or a parse position) of the document in its file; lazily, only for documents that are reported. */
function locator(doc: SourceDocument): Locate {
  let source: JsonSource | undefined;
  return (pointer) => {
    source ??= JsonSource.parse(doc.file, Buffer.from(doc.text));
    const at = source.locate(pointer);
    return doc.line === undefined ? at : { file: doc.file, line: doc.line, ...(at.column === undefined ? {} : { column: at.column }) };
  };
}

function refusal(doc: SourceDocument, code: string, message: string, details: readonly Finding[] = []): Refusal {
  const locate = locator(doc);
  return { file: doc.file, ...(doc.line === undefined ? {} : { line: doc.line }), code, message, details: details.map((f) => withLocation(f, locate)) };
}

/**
 * A document longer than any registration request may be (REGISTRY_MAX_BODY_BYTES), which was
 * not read: said as the size limit a registration of it would meet.
 */
function tooLongRefusal(doc: SourceDocument, limit: number): Refusal {
  const what = doc.line === undefined ? 'The file' : `Line ${doc.line}`;
  const bytes = (n: number): string => `${n.toLocaleString('en-US')} bytes`;
  return {
    file: doc.file,
    ...(doc.line === undefined ? {} : { line: doc.line }),
    code: 'TOO_LARGE',
    message: `${what} is ${bytes(doc.bytes)}, more than one registration may carry (${bytes(limit)}, REGISTRY_MAX_BODY_BYTES), so it was not read.`,
    details: [
      {
        path: '',
        location: { file: doc.file, ...(doc.line === undefined ? {} : { line: doc.line }) },
        rule: 'too-large',
        message: `${bytes(doc.bytes)} exceeds the limit of ${bytes(limit)}`,
        hint: doc.line === undefined ? 'Check that this is the document you meant to import; shorten it or split it.' : 'Check that the file has one document per line (a JSON-lines file); shorten or split this one.',
      },
    ],
  };
}

/** The refusal of a document, with the error a registration of it would get. */
export function refusalOf(doc: SourceDocument, error: RegistryError): Refusal {
  return refusal(doc, error.code, error.message, error.details ?? []);
}

/** A document that is not JSON: "file:line:column: not valid JSON: why" (the line of a JSON-lines document is its own). */
function notJsonRefusal(doc: SourceDocument, reason: string, position: SourcePosition | undefined): Refusal {
  const column = position?.column;
  const line = doc.line ?? position?.line;
  const where = line === undefined ? doc.file : `${doc.file}:${line}${column === undefined ? '' : `:${column}`}`;
  return { file: doc.file, ...(doc.line === undefined ? {} : { line: doc.line }), code: 'NOT_JSON', message: `${where}: not valid JSON: ${reason}`, details: manyDocuments(doc, reason, position) };
}

/**
 * A *.json file (one document) holding a JSON value, then another at the start of a line: JSON
 * lines, or documents one after another. Refused as "unexpected text after the JSON value", with
 * nothing on what to do, where `validate` says it; an import reads such a file as *.jsonl.
 */
function manyDocuments(doc: SourceDocument, reason: string, position: SourcePosition | undefined): Refusal['details'] {
  if (doc.line !== undefined || reason !== TEXT_AFTER_VALUE || position?.column !== 1) return [];
  return [
    {
      path: '',
      location: { file: doc.file, line: position.line, column: 1 },
      rule: 'json-lines',
      message: 'a *.json file holds one document; this one holds more, one per line (JSON lines?)',
      hint: `Name it *.jsonl, which an import reads one document per line: mv ${doc.file} ${doc.file.replace(/\.json$/i, '')}.jsonl, then import that`,
    },
  ];
}

/**
 * A JSON-lines source (standard input, *.jsonl) whose first line is "{" or "[" alone: JSON
 * written over many lines, which JSON lines cannot be. Said once, with what to do instead.
 */
function notJsonLinesRefusal(doc: SourceDocument, opening: '{' | '['): Refusal {
  const stdin = doc.file === STANDARD_INPUT;
  const what = opening === '[' ? 'an array written over many lines (pretty-printed)' : 'a pretty-printed JSON document';
  const oneLine = opening === '[' ? "jq -c '.[]'" : 'jq -c .';
  const hint = stdin
    ? `${opening === '{' ? 'Pass its file instead (a2a-registry import card.json), or put' : 'Put'} each document on one line: ${oneLine} cards.json | a2a-registry import -`
    : `${opening === '{' ? 'A file of one document: name it *.json. Or put' : 'Put'} each document on one line: ${oneLine} ${doc.file} > cards.jsonl, then import cards.jsonl`;
  return {
    file: doc.file,
    ...(doc.line === undefined ? {} : { line: doc.line }),
    code: 'NOT_JSON',
    message:
      `${doc.file}:${doc.line}: not JSON lines: the line is "${opening}" alone, as ${what} begins; ` +
      `${stdin ? 'standard input' : 'a JSON-lines file'} holds one whole document per line, so the rest of it was not read.`,
    details: [{ path: '', location: { file: doc.file, ...(doc.line === undefined ? {} : { line: doc.line }) }, rule: 'json-lines', message: 'one document per line expected', hint }],
  };
}

/**
 * A JSON-lines source (standard input, *.jsonl) without a document: refused, as an empty *.json
 * file is, not imported as 0 documents with exit 0 (an empty input is almost always a mistake).
 */
function noDocumentsRefusal(doc: SourceDocument, why: 'empty' | 'blank'): Refusal {
  const stdin = doc.file === STANDARD_INPUT;
  const held = stdin ? (why === 'empty' ? 'nothing came in' : 'blank lines alone came in') : why === 'empty' ? 'the file is empty (0 bytes)' : 'it holds blank lines only';
  const hint = stdin
    ? 'Check the command before the |: it wrote nothing (did it fail?). Or name the files to import instead of -'
    : 'Check that this is the file you meant (an export that failed leaves an empty one), or leave it out';
  return {
    file: doc.file,
    code: 'NOT_JSON',
    message: `${doc.file}: no documents: ${held}.`,
    details: [{ path: '', location: { file: doc.file }, rule: 'json-lines', message: 'one document per line expected, none found', hint }],
  };
}

/** A whole-file document that is an array: of cards, most likely, which an import takes one per line. */
function arrayRefusal(doc: SourceDocument, array: unknown[]): Refusal {
  const where = doc.file === STANDARD_INPUT ? "... | jq -c '.[]' | a2a-registry import -" : `jq -c '.[]' ${doc.file} > cards.jsonl, then import cards.jsonl`;
  return refusal(doc, 'VALIDATION_FAILED', `An agent card must be a JSON object; this document is an array (of ${countOf(array.length, 'value')}).`, [
    { path: '', rule: 'type', message: 'must be a JSON object', hint: `To import the documents the array holds, put them one per line: ${where}` },
  ]);
}

/** The document as a registration's subject; the kind detected from its content as `validate` does. */
export function parseDocument(doc: SourceDocument): Parsed {
  if (doc.notJsonLines !== undefined) return { refusal: notJsonLinesRefusal(doc, doc.notJsonLines) };
  if (doc.noDocuments !== undefined) return { refusal: noDocumentsRefusal(doc, doc.noDocuments) };
  if (doc.tooLong !== undefined) return { refusal: tooLongRefusal(doc, doc.tooLong) };
  // Its text has U+FFFD for the bytes that are not UTF-8: parsed, it would be stored mangled.
  if (doc.notUtf8) return { refusal: notJsonRefusal(doc, doc.notUtf8.reason, doc.notUtf8) };
  let value: unknown;
  try {
    value = JSON.parse(doc.text);
  } catch (parseError) {
    // JSON.parse said no; JsonSource says where and why, in the words `validate` uses.
    try {
      JsonSource.parse(doc.file, Buffer.from(doc.text));
    } catch (err) {
      if (!(err instanceof JsonSyntaxError)) throw err;
      return { refusal: notJsonRefusal(doc, err.reason, err.position) };
    }
    // JsonSource took what JSON.parse did not (it skips a byte-order mark): not JSON all the same,
    // never a document read as nothing ("this document is undefined").
    return { refusal: notJsonRefusal(doc, (parseError as Error).message, undefined) };
  }
  const kind = detectKind(value);
  if (kind === 'agent' && Array.isArray(value)) return { refusal: arrayRefusal(doc, value) };
  // Half an MCP server document, or its tools beside its server: said as validate and register say it.
  const misshapen = misshapenDocument(value);
  if (misshapen) return { refusal: refusal(doc, 'VALIDATION_FAILED', misshapen.message, misshapen.details) };
  // The document's text is checked for what only it shows (a key given twice, a number rounded), as an uploaded file's is.
  const written = { text: doc.text, at: '' };
  if (kind === 'agent') return { subject: { type: 'agent-card', card: value, documentText: doc.text, sizeBytes: doc.bytes, written } };
  if (kind === 'mcp-server' && isObject(value)) {
    const toolspecText = JSON.stringify(value.toolspec);
    // As for a data part: the toolspec's compact serialisation is what is measured and stored.
    return { subject: { type: 'mcp-server', server: value.mcpServer, toolspec: value.toolspec, toolspecText, sizeBytes: compactJsonBytes(value.toolspec), written } };
  }
  return {
    refusal: refusal(doc, 'VALIDATION_FAILED', 'A toolspec on its own has no server to register: import MCP servers as {"mcpServer": {"name": ..., "url": ...}, "toolspec": {"tools": [...]}}.', [
      { path: '', message: 'a bare toolspec (a tools/list result) without its server', hint: `Wrap it: {"mcpServer": {"name": "files", "url": "https://mcp.example.com/mcp"}, "toolspec": ${toolspecOf(value)}}.` },
    ]),
  };
}

/**
 * What of a bare toolspec goes in "toolspec": the document itself, or, for the other shapes
 * detectKind takes for one, what it holds. "<this document>" for a whole tools/list response or a
 * bare list of tools led to a second refusal (the envelope, or an array, where {"tools": [...]} goes).
 */
function toolspecOf(value: unknown): string {
  if (Array.isArray(value)) return '{"tools": <this array>}';
  if (isObject(value) && 'jsonrpc' in value && !('tools' in value)) return '<its "result">';
  return '<this document>';
}

/** Parses and checks a batch of documents; one answer per document, in order. */
export async function prepareDocuments(checks: ImportChecks, docs: readonly SourceDocument[]): Promise<Prepared[]> {
  const prepared: Prepared[] = [];
  for (const doc of docs) {
    const parsed = parseDocument(doc);
    if ('refusal' in parsed) {
      prepared.push(parsed);
      continue;
    }
    const checked = await checks.prepare(parsed.subject);
    prepared.push('refused' in checked ? { refusal: refusalOf(doc, checked.refused) } : { ready: checked });
  }
  return prepared;
}
