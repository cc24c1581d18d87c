/**
 * Loads the registry's JSON Schemas from the repository's schemas/ directory. They are data
 * files (published, documented, reusable by peers), not TypeScript, so they are read at run
 * time rather than imported: JSON module imports still print an experimental warning on
 * Node 20. The module runs from src/validation/ (tsx) or dist/src/validation/ (built), so the
 * directory is looked for one and two levels above the source tree.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isObject, type JsonObject } from '../lib/json.js';

export const SCHEMA_FILES = {
  cardV03: 'a2a-agent-card-v0.3.schema.json',
  cardV10: 'a2a-agent-card-v1.0.schema.json',
  toolspec: 'mcp-toolspec.schema.json',
  serverMeta: 'mcp-server-meta.schema.json',
} as const;

export type SchemaName = keyof typeof SCHEMA_FILES;

function schemasDir(): string {
  const candidates = ['../../schemas/', '../../../schemas/'].map((rel) => fileURLToPath(new URL(rel, import.meta.url)));
  const found = candidates.find((dir) => existsSync(dir + SCHEMA_FILES.cardV10));
  if (!found) throw new Error(`JSON Schemas not found; looked in ${candidates.join(' and ')}`);
  return found;
}

let texts: Record<SchemaName, string> | undefined;
let cache: Record<SchemaName, JsonObject> | undefined;

/**
 * The schema files' text, read once per process. Kept apart from parsing: a start that uses the
 * precompiled validators only fingerprints the text (./precompiled.ts) and never parses it.
 */
export function loadSchemaTexts(): Record<SchemaName, string> {
  if (texts) return texts;
  const dir = schemasDir();
  const read = (name: SchemaName): string => readFileSync(dir + SCHEMA_FILES[name], 'utf8');
  texts = { cardV03: read('cardV03'), cardV10: read('cardV10'), toolspec: read('toolspec'), serverMeta: read('serverMeta') };
  return texts;
}

/** The parsed schema files, parsed once per process. */
export function loadSchemas(): Record<SchemaName, JsonObject> {
  if (cache) return cache;
  const text = loadSchemaTexts();
  const parse = (name: SchemaName): JsonObject => {
    const parsed: unknown = JSON.parse(text[name]);
    if (!isObject(parsed)) throw new Error(`${SCHEMA_FILES[name]} is not a JSON object`);
    return parsed;
  };
  cache = { cardV03: parse('cardV03'), cardV10: parse('cardV10'), toolspec: parse('toolspec'), serverMeta: parse('serverMeta') };
  return cache;
}

let owners: WeakMap<object, string> | undefined;

/**
 * Name of the definition ("AgentSkill", "SecurityScheme"...) a subschema of our own schemas
 * belongs to. ajv reports `schemaPath` relative to the referenced definition, so it cannot
 * say which definition failed; its verbose `parentSchema` is the very object from the loaded
 * schema, so an identity map can.
 */
export function definitionOwner(subschema: unknown): string | undefined {
  if (typeof subschema !== 'object' || subschema === null) return undefined;
  if (!owners) {
    const map = new WeakMap<object, string>();
    const mark = (node: unknown, name: string): void => {
      if (typeof node !== 'object' || node === null) return;
      map.set(node, name);
      for (const child of Array.isArray(node) ? node : Object.values(node)) mark(child, name);
    };
    for (const schema of Object.values(loadSchemas())) {
      for (const key of ['definitions', '$defs']) {
        const defs = schema[key];
        if (isObject(defs)) for (const [name, def] of Object.entries(defs)) mark(def, name);
      }
    }
    owners = map;
  }
  return owners.get(subschema);
}
