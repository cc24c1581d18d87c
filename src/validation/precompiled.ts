/**
 * Loads the validators the build precompiled (./precompile.ts writes two ES modules per JSON
 * Schema dialect: the fast validators, and the all-errors ones that explain a failure), so a
 * process runs generated code instead of compiling schemas (about 0.5 s of CPU saved per start,
 * and 0.2-0.3 s at its first invalid document). A module is used only when its recorded
 * fingerprint equals the one of the schema files, ajv options and ajv version this process runs
 * with (./ajv-recipe.ts): a schema edited after the build, or a build missing the step, falls back
 * to compiling at run time (correct, only slower) and says why on the debug log
 * (NODE_DEBUG=a2a-registry, and the serving registry's debug line "JSON Schema validators").
 * Never an old schema served silently.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { debuglog } from 'node:util';
import type { ValidateFunction } from 'ajv';
import { DIALECT_SCHEMAS, recipeFingerprint, type Dialect } from './ajv-recipe.js';
import { loadSchemas, loadSchemaTexts, type SchemaName } from './schema-files.js';
import { resolvePointer } from '../lib/json.js';

const debug = debuglog('a2a-registry');

/** A dialect's validators: one per schema of ours in it (by SchemaName) and `meta`, its meta-schema. */
export type PrecompiledValidators = Readonly<Record<string, ValidateFunction>>;

/** fast: first error, for every document; explain: all errors, verbose, for a failure. */
export type Role = 'fast' | 'explain';

/**
 * Where the build writes the modules and where they are read: beside the built validation
 * modules (dist/src/validation/precompiled/). Sources run with tsx (tests, `npm run dev`) read the
 * same directory of the repository's build, which the fingerprint guards like any other.
 */
export function precompiledDir(): string {
  const rel = import.meta.url.endsWith('.ts') ? '../../dist/src/validation/precompiled/' : './precompiled/';
  return fileURLToPath(new URL(rel, import.meta.url));
}

export const precompiledFile = (dir: string, dialect: Dialect, role: Role): string => `${dir}${dialect}${role === 'explain' ? '.explain' : ''}.js`;

export type LoadResult = { ok: true; validators: PrecompiledValidators } | { ok: false; reason: string };

/**
 * The object at `pointer` in one of the loaded schemas, for an explain module's schema references
 * (the same objects translate.ts and definitionOwner see).
 */
function schemaAt(name: SchemaName, pointer: string): object {
  const node = resolvePointer(loadSchemas()[name], pointer);
  if (typeof node !== 'object' || node === null) throw new Error(`precompiled validators refer to ${name}${pointer}, which is not in the schema`);
  return node;
}

/** Loads one generated module from `dir`, if it is there, complete and generated from `fingerprint`'s inputs. */
export function loadPrecompiled(dir: string, dialect: Dialect, fingerprint: string, role: Role = 'fast'): LoadResult {
  const file = precompiledFile(dir, dialect, role);
  if (!existsSync(file)) return { ok: false, reason: `${file} not found (run npm run build)` };
  let exported: Record<string, unknown>;
  try {
    // require() of an ES module (Node >= 22.12): synchronous, as the validators' callers are.
    const module = createRequire(import.meta.url)(file) as Record<string, unknown>;
    if (module.FINGERPRINT !== fingerprint) return { ok: false, reason: `${file} was generated from other schema files, options or ajv version (run npm run build)` };
    exported = module;
    if (role === 'explain') {
      if (typeof module.create !== 'function') return { ok: false, reason: `${file} has no create()` };
      exported = (module.create as (at: typeof schemaAt, exports: Record<string, unknown>) => Record<string, unknown>)(schemaAt, {});
    }
  } catch (err) {
    return { ok: false, reason: `${file} did not load: ${err instanceof Error ? err.message : String(err)}` };
  }
  const validators: Record<string, ValidateFunction> = {};
  for (const name of [...DIALECT_SCHEMAS[dialect], 'meta']) {
    const fn = exported[name];
    if (typeof fn !== 'function') return { ok: false, reason: `${file} has no validator ${JSON.stringify(name)}` };
    validators[name] = fn as ValidateFunction;
  }
  return { ok: true, validators };
}

const results = new Map<string, LoadResult>();
let fingerprint: string | undefined;

/** This process's precompiled validators of `dialect` and `role`, or undefined to compile them at run time. */
export function precompiledValidators(dialect: Dialect, role: Role = 'fast'): PrecompiledValidators | undefined {
  const key = role === 'fast' ? dialect : `${dialect} ${role}`;
  let result = results.get(key);
  if (!result) {
    fingerprint ??= recipeFingerprint(loadSchemaTexts());
    result = loadPrecompiled(precompiledDir(), dialect, fingerprint, role);
    results.set(key, result);
    debug('%s %s validators: %s', dialect, role, result.ok ? 'precompiled' : `compiled at run time: ${result.reason}`);
  }
  return result.ok ? result.validators : undefined;
}

/** Where each dialect's validators came from, for the start-up debug log (those not used yet are left out). */
export function validatorOrigins(): Record<string, string> {
  return Object.fromEntries([...results].map(([key, r]) => [key, r.ok ? 'precompiled' : `compiled: ${r.reason}`]));
}
