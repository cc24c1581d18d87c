/**
 * How a client writes a message's parts, by its A2A generation and its binding's encoding: the
 * names the registry's refusals give parts and their fields, and the JSON Pointers of their
 * findings, so that a client is told of its parts as it sent them. The one place for that rule:
 * the parser (request-parser.ts), the JSON-RPC door's request guard (protocol/request-guard.ts),
 * a watch's renewal (protocol/watch-renew.ts) and the gRPC call guard read it.
 * - v1.0 (A2A 4.1.6): `parts`, each {"text"}, {"data", "mediaType"}, {"raw", "filename",
 *   "mediaType"} or {"url"}; the same names in JSON and over gRPC (ProtoJSON's), except that a
 *   file's bytes are base64 text in JSON and the bytes as they are in protobuf.
 * - v0.3 in JSON (JSON-RPC; A2A 0.3 6.5): parts say their `kind`, and a file's bytes (or URI),
 *   name and media type sit in `file`.
 * - v0.3 over gRPC (a2a.v1's a2a.proto): the message's parts are its `content`, each a Part of
 *   text, file (a FilePart: fileWithBytes or fileWithUri, and mimeType) or data (a DataPart,
 *   whose own `data` holds the object), with no kind; the SDK's reader keeps no file name there.
 *   Such a client was told of {"kind": "file", "file": {..., "bytes": "<base64>"}}, file.uri and
 *   /parts/0/raw, none of which its messages have.
 * Fields are named as ProtoJSON writes them (fileWithBytes, the .proto's file_with_bytes), as the
 * registry's other gRPC refusals name fields (messageId, pageSize).
 */
import type { MessageEncoding } from '../contract/binding.js';

/** The A2A generation a request was sent in: its error messages show parts and methods of that generation. */
export type MessageGeneration = 'v1.0' | 'v0.3';

export interface PartWords {
  /** A data part holding an operation. */
  dataPart: string;
  /** A data part holding `object` (JSON text, e.g. '{"register": <the document>}'). */
  dataPartWith: (object: string) => string;
  /** A text part, as in "a message with only <textPart> is a search". */
  textPart: string;
  /** A file part carrying a document. */
  filePart: string;
  /** A file's bytes, its URI and its media type, as fields of a part. */
  fileBytes: string;
  fileUri: string;
  mediaType: string;
  /** How to send a JSON document as a file's bytes (in JSON: base64 text; in protobuf: the bytes). */
  bytesAdvice: string;
  /** What a message without parts is told. */
  needsAPart: string;
  /** What an empty part (no content, or a file part without its file) is told. */
  emptyPart: (index: number) => string;
  /** The streaming method (a watch's). */
  streaming: string;
  /** JSON Pointers in the message: of part `index`'s data object (an operation's arguments are below it), of its file's bytes. */
  dataAt: (index: number) => string;
  fileBytesAt: (index: number) => string;
  /** What a valid request looks like, for BAD_REQUEST messages. */
  requestShapes: string;
}

const BYTES_ADVICE: Record<MessageEncoding, string> = {
  json: 'upload the JSON document encoded as UTF-8, then base64',
  protobuf: 'send the JSON document encoded as UTF-8, its bytes as they are (protobuf bytes take no base64)',
};

/** What differs between the ways of writing parts; the rest is built from it (words()). */
interface Dialect {
  /** A data part holding `object`. */
  data: (object: string) => string;
  /** A text part holding "weather". */
  text: string;
  textPart: string;
  filePart: string;
  fileBytes: string;
  fileUri: string;
  mediaType: string;
  /** What a part needs, said to an empty one. */
  partNeeds: string;
  streaming: string;
  /** Pointers: the message's parts, a part's data object and its file's bytes below it. */
  parts: string;
  dataBelow: string;
  fileBytesBelow: string;
}

const V1: Dialect = {
  data: (object) => `{"data": ${object}, "mediaType": "application/json"}`,
  text: '{"text": "weather"}',
  textPart: 'a text part',
  filePart: 'an agent-card.json or toolspec.json file part',
  fileBytes: 'raw',
  fileUri: 'url',
  mediaType: 'mediaType',
  partNeeds: 'a part needs one of text, data or raw',
  streaming: 'SendStreamingMessage',
  parts: '/parts',
  dataBelow: '/data',
  fileBytesBelow: '/raw',
};

const V03_JSON: Dialect = {
  data: (object) => `{"kind": "data", "data": ${object}}`,
  text: '{"kind": "text", "text": "weather"}',
  textPart: 'a text part ({"kind": "text", "text": "..."})',
  filePart: 'a file part {"kind": "file", "file": {"name": "agent-card.json" | "toolspec.json", "mimeType": "application/json", "bytes": "<base64>"}}',
  fileBytes: 'file.bytes',
  fileUri: 'file.uri',
  mediaType: 'file.mimeType',
  partNeeds: 'a part needs its content, the text of a text part, the data of a data part, or file.bytes of a file part',
  streaming: 'message/stream',
  parts: '/parts',
  dataBelow: '/data',
  fileBytesBelow: '/file/bytes',
};

const V03_PROTOBUF: Dialect = {
  data: (object) => `{"data": {"data": ${object}}}`,
  text: '{"text": "weather"}',
  textPart: 'a text part ({"text": "..."})',
  filePart: 'a file part {"file": {"fileWithBytes": <the document\'s bytes>, "mimeType": "application/json"}}',
  fileBytes: 'file.fileWithBytes',
  fileUri: 'file.fileWithUri',
  mediaType: 'file.mimeType',
  partNeeds: 'a part needs its content, the text of a text part, the data of a data part, or file.fileWithBytes of a file part',
  streaming: 'SendStreamingMessage',
  parts: '/content',
  dataBelow: '/data/data',
  fileBytesBelow: '/file/fileWithBytes',
};

function requestShapesIn(dialect: Dialect): string {
  return (
    `Send one data part ${dialect.data('{<operation>: {...}}')} whose object has exactly one key: ` +
    'register {"agentCard": {...}} or {"mcpServer": {...}, "toolspec": {"tools": [...]}}, or by reference {"url": "https://..."} or {"mcpServer": {...}, "fetchTools": true}; ' +
    'validate (a document, as register); search {"query": "...", "filter": {...}, "limit": 20, "resultsPer": "entry" | "match"}; get {"id": "..."}; list {"pageSize": 50}; ' +
    `unregister {"id": "..."}; refresh {"id": "..."}; watch {"query": "...", "filter": {...}} (${dialect.streaming}, with a token). ` +
    `A message with only ${dialect.textPart} is a search for that text; ${dialect.filePart} carries a document.`
  );
}

function words(dialect: Dialect, encoding: MessageEncoding): PartWords {
  return {
    dataPart: dialect.data('{<operation>: {...}}'),
    dataPartWith: dialect.data,
    textPart: dialect.textPart,
    filePart: dialect.filePart,
    fileBytes: dialect.fileBytes,
    fileUri: dialect.fileUri,
    mediaType: dialect.mediaType,
    bytesAdvice: BYTES_ADVICE[encoding],
    needsAPart: `a message needs at least one part, e.g. ${dialect.text} (a search) or ${dialect.data('{"search": {"query": "weather"}}')} (any operation: register, validate, search, get, list, unregister, refresh)`,
    emptyPart: (index) => `Part ${index} is empty: ${dialect.partNeeds}.`,
    streaming: dialect.streaming,
    dataAt: (index) => `${dialect.parts}/${index}${dialect.dataBelow}`,
    fileBytesAt: (index) => `${dialect.parts}/${index}${dialect.fileBytesBelow}`,
    requestShapes: requestShapesIn(dialect),
  };
}

const WORDS: Record<MessageGeneration, Record<MessageEncoding, PartWords>> = {
  'v1.0': { json: words(V1, 'json'), protobuf: words(V1, 'protobuf') },
  'v0.3': { json: words(V03_JSON, 'json'), protobuf: words(V03_PROTOBUF, 'protobuf') },
};

/** How a request of `generation` on a binding of `encoding` writes its parts (default: v1.0 in JSON). */
export const partWords = (generation: MessageGeneration = 'v1.0', encoding: MessageEncoding = 'json'): PartWords => WORDS[generation][encoding];
