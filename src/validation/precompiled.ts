/**
 * Loads the fast validators the build precompiled (./precompile.ts writes one ES module per JSON
 * Schema dialect), so a start runs generated code instead of compiling schemas (about 0.4 s of
 * CPU saved per process). A module is used only when its recorded fingerprint equals the one of
 * the schema files, ajv options and ajv version this process runs with (./ajv-recipe.ts): a schema
 * edited after the build, or a build missing the step, falls back to compiling at run time
 * (correct, only slower) and says why on the debug log (NODE_DEBUG=a2a-registry, and the serving
 * registry's debug log line "JSON Schema validators"). Never an old schema served silently.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { debuglog } from 'node:util';
import type { ValidateFunction } from 'ajv';
import { DIALECT_SCHEMAS, recipeFingerprint, type Dialect } from './ajv-recipe.js';
import { loadSchemaTexts } from './schema-files.js';

const debug = debuglog('a2a-registry');

/** A dialect's validators: one per schema of ours in it (by SchemaName) and `meta`, its meta-schema. */
export type PrecompiledValidators = Readonly<Record<string, ValidateFunction>>;

/**
 * Where the build writes the modules and where they are read: beside the built validation
 * modules (dist/src/validation/precompiled/). Sources run with tsx (tests, `npm run dev`) read the
 * same directory of the repository's build, which the fingerprint guards like any other.
 */
export function precompiledDir(): string {
  const rel = import.meta.url.endsWith('.ts') ? '../../dist/src/validation/precompiled/' : './precompiled/';
  return fileURLToPath(new URL(rel, import.meta.url));
}

export const precompiledFile = (dir: string, dialect: Dialect): string => `${dir}${dialect}.js`;

export type LoadResult = { ok: true; validators: PrecompiledValidators } | { ok: false; reason: string };

/** Loads one generated module from `dir`, if it is there, complete and generated from `fingerprint`'s inputs. */
export function loadPrecompiled(dir: string, dialect: Dialect, fingerprint: string): LoadResult {
  const file = precompiledFile(dir, dialect);
  if (!existsSync(file)) return { ok: false, reason: `${file} not found (run npm run build)` };
  let module: Record<string, unknown>;
  try {
    // require() of an ES module (Node >= 22.12): synchronous, as the validators' callers are.
    module = createRequire(import.meta.url)(file) as Record<string, unknown>;
  } catch (err) {
    return { ok: false, reason: `${file} did not load: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (module.FINGERPRINT !== fingerprint) return { ok: false, reason: `${file} was generated from other schema files, options or ajv version (run npm run build)` };
  const validators: Record<string, ValidateFunction> = {};
  for (const name of [...DIALECT_SCHEMAS[dialect], 'meta']) {
    const fn = module[name];
    if (typeof fn !== 'function') return { ok: false, reason: `${file} has no validator ${JSON.stringify(name)}` };
    validators[name] = fn as ValidateFunction;
  }
  return { ok: true, validators };
}

const results = new Map<Dialect, LoadResult>();
let fingerprint: string | undefined;

/** This process's precompiled validators of `dialect`, or undefined to compile them at run time. */
export function precompiledValidators(dialect: Dialect): PrecompiledValidators | undefined {
  let result = results.get(dialect);
  if (!result) {
    fingerprint ??= recipeFingerprint(loadSchemaTexts());
    result = loadPrecompiled(precompiledDir(), dialect, fingerprint);
    results.set(dialect, result);
    debug('%s validators: %s', dialect, result.ok ? 'precompiled' : `compiled at run time: ${result.reason}`);
  }
  return result.ok ? result.validators : undefined;
}

/** Where each dialect's fast validators came from, for the start-up debug log (dialects not used yet are left out). */
export function validatorOrigins(): Partial<Record<Dialect, string>> {
  return Object.fromEntries([...results].map(([dialect, r]) => [dialect, r.ok ? 'precompiled' : `compiled: ${r.reason}`]));
}
