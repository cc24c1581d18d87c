/**
 * The shapes the discovery standards define, written down here as JSON Schemas from reading the
 * specifications (AI Catalog 1.0: Agent-Card/ai-catalog, specification/ai-catalog.md; ARD v0.9
 * and the v0.91 draft: ards-project/ard-spec, spec/ard.md and its OpenAPI; MCP Server Cards:
 * modelcontextprotocol/experimental-ext-server-card, schema.ts). They check what a consumer of
 * each standard relies on; they are this project's reading, not copies of the specs' files.
 */
import assert from 'node:assert/strict';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

const nonEmpty = { type: 'string', minLength: 1 };
const strings = { type: 'array', items: { type: 'string' } };

/** AI Catalog: an entry names its artifact by media type and gives exactly one of url and data. */
const aiCatalogEntry = {
  type: 'object',
  required: ['identifier', 'displayName', 'mediaType'],
  properties: {
    identifier: nonEmpty,
    displayName: nonEmpty,
    mediaType: { type: 'string', pattern: '^[a-z]+/[a-zA-Z0-9.+-]+' },
    url: { type: 'string', format: 'uri' },
    description: { type: 'string' },
    tags: strings,
    version: { type: 'string' },
    updatedAt: { type: 'string', format: 'date-time' },
    metadata: { type: 'object', propertyNames: { minLength: 1 } },
    publisher: { type: 'object', required: ['identifier', 'displayName'] },
    trustManifest: { type: 'object', required: ['identity'] },
  },
  oneOf: [
    { required: ['url'], not: { required: ['data'] } },
    { required: ['data'], not: { required: ['url'] } },
  ],
};

export const aiCatalogSchema = {
  type: 'object',
  required: ['specVersion', 'entries'],
  properties: {
    specVersion: { type: 'string', pattern: '^[0-9]+\\.[0-9]+$' },
    host: {
      type: 'object',
      required: ['displayName'],
      properties: { displayName: nonEmpty, identifier: { type: 'string' }, documentationUrl: { type: 'string', format: 'uri' }, logoUrl: { type: 'string' } },
    },
    entries: { type: 'array', items: aiCatalogEntry },
    metadata: { type: 'object' },
  },
};

/**
 * ARD entry: a domain-anchored urn:air identifier, the media type as `type`, value or reference,
 * 2–5 representative queries when present, flat (scalar) metadata.
 */
export const ardEntrySchema = {
  type: 'object',
  required: ['identifier', 'displayName', 'type'],
  properties: {
    identifier: { type: 'string', pattern: '^urn:air:[a-zA-Z0-9.-]+(:[a-zA-Z0-9._-]+)+$' },
    displayName: nonEmpty,
    type: { type: 'string', pattern: '^[a-z]+/[a-zA-Z0-9.+-]+' },
    url: { type: 'string', format: 'uri' },
    data: { type: 'object' },
    description: { type: 'string' },
    tags: strings,
    capabilities: strings,
    representativeQueries: { type: 'array', minItems: 2, maxItems: 5, items: { type: 'string' } },
    version: { type: 'string' },
    updatedAt: { type: 'string', format: 'date-time' },
    metadata: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } },
    trustManifest: { type: 'object', required: ['identity'] },
  },
  oneOf: [
    { required: ['url'], not: { required: ['data'] } },
    { required: ['data'], not: { required: ['url'] } },
  ],
};

/** The ARD manifest (/.well-known/ard.json): an `entries` array of ARD entries. */
export const ardManifestSchema = { type: 'object', required: ['entries'], properties: { entries: { type: 'array', items: ardEntrySchema } } };

/** POST /search: results are entries with an integer score 0–100 and their source; nothing else at the top. */
export const ardSearchResponseSchema = {
  type: 'object',
  required: ['results'],
  additionalProperties: false,
  properties: {
    results: {
      type: 'array',
      items: {
        allOf: [
          ardEntrySchema,
          {
            type: 'object',
            required: ['score', 'source'],
            properties: { score: { type: 'integer', minimum: 0, maximum: 100 }, source: { type: 'string', format: 'uri' } },
          },
        ],
      },
    },
    referrals: { type: 'array', items: { type: 'object', required: ['identifier', 'displayName', 'type', 'url'] } },
    pageToken: { type: 'string' },
  },
};

/** GET /agents: a page of entries. */
export const ardListResponseSchema = {
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array', items: ardEntrySchema }, total: { type: 'integer' }, pageToken: { type: 'string' } },
};

/** ARD errors: Appendix B's codes, with a message. */
export const ardErrorSchema = {
  type: 'object',
  required: ['errorCode', 'message'],
  properties: {
    errorCode: { enum: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'NOT_FOUND', 'RATE_LIMIT_EXCEEDED', 'INTERNAL_ERROR', 'UNIMPLEMENTED', 'PERMISSION_DENIED', 'UNAVAILABLE'] },
    message: nonEmpty,
  },
};

/** MCP Server Card (the draft's v2 family). */
export const serverCardSchema = {
  type: 'object',
  required: ['$schema', 'name', 'version', 'description'],
  properties: {
    $schema: { const: 'https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json' },
    name: { type: 'string', minLength: 3, maxLength: 200, pattern: '^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$' },
    version: { type: 'string', maxLength: 255, not: { pattern: '^[\\^~>=<]|\\.x$|\\*' } },
    description: { type: 'string', minLength: 1, maxLength: 100 },
    title: { type: 'string', minLength: 1, maxLength: 100 },
    remotes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'url'],
        properties: {
          type: { enum: ['streamable-http', 'sse'] },
          url: { type: 'string', pattern: '^(https?://[^\\s]+|\\{[a-zA-Z_][a-zA-Z0-9_]*\\}[^\\s]*)$' },
          supportedProtocolVersions: strings,
        },
      },
    },
  },
};

const compiled = new Map<object, ValidateFunction>();

/** Fails with every violation (instance path and message) when `value` does not have the shape. */
export function assertShape(schema: object, value: unknown, what: string): void {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = ajv.compile(schema)));
  if (!validate(value)) {
    assert.fail(`${what} does not have the shape the standard defines:\n${(validate.errors ?? []).map((e) => `  ${e.instancePath || '/'} ${e.message}`).join('\n')}`);
  }
}
