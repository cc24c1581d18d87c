/**
 * Shapes of each operation's arguments, checked at the edge before any handler runs (in the
 * spirit of fastify's compiled schemas): strict objects, so a misspelt key is an error that
 * names it rather than a silently ignored option.
 */
import { z } from 'zod';

/** Ceiling of REGISTRY_MAX_QUERY_CHARS; the configured limit itself is applied by the request parser. */
export const MAX_QUERY_CHARS_CEILING = 10_000;
/** Values one filter key takes at most, on every door (ARD's POST /search too). */
export const MAX_FILTER_VALUES = 20;
/** Characters of one filter value (a tag, a media type, an owner), on every door. */
export const MAX_FILTER_VALUE_CHARS = 200;
const MAX_PAGE_TOKEN_CHARS = 512;

const shortString = (max: number) => z.string().min(1).max(max);
const stringList = z.array(shortString(MAX_FILTER_VALUE_CHARS)).min(1).max(MAX_FILTER_VALUES);
const kind = z.enum(['agent', 'mcp-server']);
const pageToken = z.string().min(1).max(MAX_PAGE_TOKEN_CHARS);

export const searchSchema = z.strictObject({
  query: z.string().max(MAX_QUERY_CHARS_CEILING).optional(),
  filter: z
    .strictObject({
      kind: kind.optional(),
      tags: stringList.optional(),
      inputModes: stringList.optional(),
      outputModes: stringList.optional(),
      protocolBinding: shortString(100).optional(),
      protocolVersion: shortString(20).optional(),
      streaming: z.boolean().optional(),
      readOnly: z.boolean().optional(),
      destructive: z.boolean().optional(),
      idempotent: z.boolean().optional(),
      openWorld: z.boolean().optional(),
      owner: shortString(MAX_FILTER_VALUE_CHARS).optional(),
      health: z.enum(['ok', 'unreachable', 'invalid', 'any']).optional(),
      verified: z.boolean().optional(),
    })
    .optional(),
  limit: z.number().int().min(1).max(100).optional(),
  pageToken: pageToken.optional(),
  /** One result per agent or MCP server (default), or per matching skill, tool or entry text. */
  resultsPer: z.enum(['entry', 'match']).optional(),
});

/** A standing search: a search's query and filter (no paging), and whether to send the current matches first. */
export const watchSchema = z.strictObject({
  query: searchSchema.shape.query,
  filter: searchSchema.shape.filter,
  initial: z.boolean().optional(),
});

export const getSchema = z.strictObject({
  id: shortString(100),
  revision: z.number().int().min(1).optional(),
});

export const listSchema = z.strictObject({
  filter: z
    .strictObject({
      kind: kind.optional(),
      owner: shortString(200).optional(),
      mine: z.boolean().optional(),
      health: z.enum(['ok', 'unreachable', 'invalid']).optional(),
      verified: z.boolean().optional(),
    })
    .optional(),
  pageSize: z.number().int().min(1).max(100).optional(),
  pageToken: pageToken.optional(),
  withDocuments: z.boolean().optional(),
});

export const unregisterSchema = z.strictObject({ id: shortString(100) });

export const refreshSchema = z.strictObject({ id: shortString(100) });

/**
 * register/validate: the document comes inline here, or as a file part beside it; a register
 * may instead give the card's URL (`url`), or ask for an MCP server's tools (`fetchTools`).
 */
export const documentOperationSchema = z.strictObject({
  agentCard: z.unknown().optional(),
  mcpServer: z.unknown().optional(),
  toolspec: z.unknown().optional(),
  url: z.string().min(1).max(2048).optional(),
  fetchTools: z.boolean().optional(),
});

/** What a valid request looks like, for BAD_REQUEST messages. */
export const REQUEST_SHAPES =
  'Send one data part {"data": {<operation>: {...}}, "mediaType": "application/json"} whose object has exactly one key: ' +
  'register {"agentCard": {...}} or {"mcpServer": {...}, "toolspec": {"tools": [...]}}, or by reference {"url": "https://..."} or {"mcpServer": {...}, "fetchTools": true}; ' +
  'validate (a document, as register); search {"query": "...", "filter": {...}, "limit": 20, "resultsPer": "entry" | "match"}; get {"id": "..."}; list {"pageSize": 50}; ' +
  'unregister {"id": "..."}; refresh {"id": "..."}; watch {"query": "...", "filter": {...}} (SendStreamingMessage, with a token). ' +
  'A message with only a text part is a search for that text; an agent-card.json or toolspec.json file part carries a document.';
