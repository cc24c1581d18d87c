/**
 * What the registry's validators are built from: the ajv options of each role, which schemas
 * each JSON Schema dialect compiles, and the fingerprint of all of it. Shared by the run-time
 * compiler (./ajv-instances.ts) and the build-time generator (./precompile.ts) so both build the
 * same validators, and so that a precompiled module is only ever used with the schema files,
 * options and ajv it was generated from (./precompiled.ts compares fingerprints).
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Options } from 'ajv';
import type { SchemaName } from './schema-files.js';

export type Dialect = 'draft-07' | '2019-09' | '2020-12';
export const DIALECTS: readonly Dialect[] = ['draft-07', '2019-09', '2020-12'];

/**
 * - fast (explain false): stops at the first error, for the common path;
 * - explain: allErrors + verbose, run only on a document that already failed (and is already known
 *   to be within the size limit: allErrors on untrusted input defeats the early exits).
 * strict: our own schemas must not contain typos; user schemas are never compiled, and
 * validateSchema does not apply strict mode, so this never rejects a peer's schema.
 */
export function ajvOptions(explain: boolean): Options {
  const base: Options = { strict: true, strictRequired: false };
  return explain ? { ...base, allErrors: true, verbose: true } : base;
}

/**
 * Our schemas by dialect: draft-07 compiles the v0.3 card schema (the official one is draft-07);
 * 2020-12 the v1.0 card, toolspec and server-metadata schemas. Every dialect also checks tool
 * input/output schemas against its meta-schema.
 */
export const DIALECT_SCHEMAS: Record<Dialect, readonly SchemaName[]> = {
  'draft-07': ['cardV03'],
  '2019-09': [],
  '2020-12': ['cardV10', 'toolspec', 'serverMeta'],
};

/**
 * Bump when the generated code changes for reasons the fingerprint does not see: the generator's
 * own code (./precompile.ts), or ./formats.ts, which the generated modules import from the build.
 */
const GENERATOR_VERSION = 1;

/**
 * Identifies the validators a build would generate: the generator's version, ajv's and
 * ajv-formats' versions, the fast options and the schema files' text. Cheap (a hash of ~60 KB).
 */
export function recipeFingerprint(schemaTexts: Record<SchemaName, string>): string {
  const require = createRequire(import.meta.url);
  const version = (pkg: string): string => (require(`${pkg}/package.json`) as { version: string }).version;
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ generator: GENERATOR_VERSION, ajv: version('ajv'), ajvFormats: version('ajv-formats'), options: ajvOptions(false), dialects: DIALECT_SCHEMAS }));
  for (const name of Object.keys(schemaTexts).sort() as SchemaName[]) hash.update(`\u0000${name}\u0000${schemaTexts[name]}`);
  return hash.digest('hex');
}
