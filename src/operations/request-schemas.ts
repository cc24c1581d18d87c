/**
 * Shapes of each operation's arguments, checked at the edge before any handler runs (in the
 * spirit of fastify's compiled schemas): strict objects, so a misspelt key is an error that
 * names it rather than a silently ignored option.
 */
import { z } from 'zod';
import type { Finding } from '../contract/types.js';
import { longerThan } from '../lib/code-points.js';
import { pageTokenOutOfLimits } from '../registry/page-token.js';

/** Ceiling of REGISTRY_MAX_QUERY_CHARS; the configured limit itself is applied by the request parser. */
export const MAX_QUERY_CHARS_CEILING = 10_000;
/** Values one filter key takes at most, on every door (ARD's POST /search too). */
export const MAX_FILTER_VALUES = 20;
/** Characters of one filter value (a tag, a media type, an owner), on every door. */
export const MAX_FILTER_VALUE_CHARS = 200;
const MAX_PAGE_TOKEN_CHARS = 512;

/**
 * A query's text, at most `max` characters counted as code points (../lib/code-points.ts), as the
 * maxLength it is published with counts them. (zod's max, as installed: 4.6.7, counts code points
 * too; this check keeps the query's own message.)
 */
export const queryText = (max: number) =>
  z
    .string()
    .check((ctx) => {
      if (longerThan(ctx.value, max)) {
        ctx.issues.push({ code: 'too_big', origin: 'string', maximum: max, inclusive: true, input: ctx.value, message: `Too big: expected string to have <=${max} characters` });
      }
    })
    .meta({ maxLength: max });

const shortString = (max: number) => z.string().min(1).max(max);
/**
 * A filter value: the search (and list, its owner) trims it, so one of only white space asked for nothing and the key
 * was dropped: {"tags": [" "]} matched every entry (a tag has a character: validation warns of a
 * blank one).
 */
export const BLANK_FILTER_VALUE = 'must not be blank (only white space): give the value, or leave the key out';
/** A filter value of no character, where a door words it itself (ARD's POST /search; the schemas' min(1) words it on the others). */
export const EMPTY_FILTER_VALUE = 'must not be empty: give the value, or leave the key out';
/**
 * Published with the pattern "\\S" (a character other than white space: JavaScript's \s is the
 * set trim() removes), so a JSON Schema says what the refinement refuses: the MCP tools' input
 * schemas (made from these) said only minLength 1, and a client checking its arguments against
 * them sent " " and was refused.
 */
const filterValue = (max: number) =>
  shortString(max)
    // An empty value is min(1)'s to tell ("must not be empty: give a string of 1 to N
    // characters"): refused by both, it was told twice at one path, the second time as "only
    // white space", which it has none of.
    .refine((s) => s === '' || s.trim() !== '', BLANK_FILTER_VALUE)
    .meta({ pattern: '\\S' });
const stringList = z.array(filterValue(MAX_FILTER_VALUE_CHARS)).min(1).max(MAX_FILTER_VALUES);
const kind = z.enum(['agent', 'mcp-server']);

/**
 * Findings a schema makes of its own issues, in place of zod's words (zodFindings reads them, for
 * the schema at an issue's path): a refusal with a rule elsewhere keeps it when the schema is first to see it.
 */
export const issueFindings = z.registry<{ finding: (issue: { code: string }) => Omit<Finding, 'path'> | undefined }>();

/**
 * A pageToken of at most `max` characters (a door whose tokens wrap the registry's takes longer
 * ones: ARD's POST /search), none empty. Outside these limits it is no token this registry issued,
 * refused as one (page-token.ts), on every door whose arguments this schema checks.
 */
export const pageTokenText = (max: number) => {
  const token = z.string().min(1).max(max);
  return token.register(issueFindings, {
    finding: (issue) =>
      issue.code === 'too_small' ? pageTokenOutOfLimits('it is empty') : issue.code === 'too_big' ? pageTokenOutOfLimits(`it is longer than ${max} characters, which no page token is`) : undefined,
  });
};
/** The registry's own page tokens: A2A's and MCP's pageToken, the AI Catalog's `after`. */
export const pageToken = pageTokenText(MAX_PAGE_TOKEN_CHARS);

export const searchSchema = z.strictObject({
  query: queryText(MAX_QUERY_CHARS_CEILING).optional(),
  filter: z
    .strictObject({
      kind: kind.optional(),
      tags: stringList.optional(),
      inputModes: stringList.optional(),
      outputModes: stringList.optional(),
      protocolBinding: filterValue(100).optional(),
      protocolVersion: filterValue(20).optional(),
      streaming: z.boolean().optional(),
      readOnly: z.boolean().optional(),
      destructive: z.boolean().optional(),
      idempotent: z.boolean().optional(),
      openWorld: z.boolean().optional(),
      owner: filterValue(MAX_FILTER_VALUE_CHARS).optional(),
      capabilities: stringList.optional(),
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

/** An entry's id; described, so that a request without one is told what to give (issue-words.ts). */
export const entryId = shortString(100).describe('The entry id, as search and list results give it.');

export const getSchema = z.strictObject({
  id: entryId,
  revision: z.number().int().min(1).optional(),
});

export const listSchema = z.strictObject({
  filter: z
    .strictObject({
      kind: kind.optional(),
      // As search's: a blank owner listed nothing, without a word (search refuses it).
      owner: filterValue(MAX_FILTER_VALUE_CHARS).optional(),
      mine: z.boolean().optional(),
      health: z.enum(['ok', 'unreachable', 'invalid']).optional(),
      verified: z.boolean().optional(),
    })
    .optional(),
  pageSize: z.number().int().min(1).max(100).optional(),
  pageToken: pageToken.optional(),
  withDocuments: z.boolean().optional(),
  orderBy: z.enum(['createdAt', 'updatedAt']).optional(),
});

export const unregisterSchema = z.strictObject({ id: entryId });

export const refreshSchema = z.strictObject({ id: entryId });

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
