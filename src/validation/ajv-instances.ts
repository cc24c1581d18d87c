/**
 * The validators of our own schemas and the meta-schema checkers, built once per process.
 *
 * - Fast validators (stop at the first error; every document runs them) come precompiled from
 *   the build (./precompiled.ts) when its fingerprint matches the schema files, options and ajv
 *   here; otherwise they are compiled now, as before precompilation existed.
 * - Explain validators (allErrors + verbose, to explain a failure) come from the build the same
 *   way, loaded when a document first fails (a valid document never pays for them), or are
 *   compiled then.
 * - One ajv instance per dialect and role: ajv cannot mix dialects in one instance, and `allErrors`
 *   on untrusted input defeats the early exits that keep validation cheap.
 * - ajv itself is loaded only when something is compiled here (createRequire: it is CommonJS), so a
 *   process running the build's validators never loads its compiler.
 */
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { ajvOptions, DIALECT_SCHEMAS, DIALECTS, type Dialect } from './ajv-recipe.js';
import { isValidRegex } from './formats.js';
import { precompiledValidators } from './precompiled.js';
import { loadSchemas, type SchemaName } from './schema-files.js';
import type { JsonObject } from '../lib/json.js';

export type { Dialect } from './ajv-recipe.js';
export type AnyAjv = Ajv | Ajv2019 | Ajv2020;

const require = createRequire(import.meta.url);

/** A new ajv instance of `dialect` with our formats (also what the build-time generator compiles with). */
export function newAjv(dialect: Dialect, options: Options): AnyAjv {
  const ajv = construct(dialect, options);
  (require('ajv-formats') as typeof import('ajv-formats')).default(ajv);
  ajv.addFormat('regex', isValidRegex);
  return ajv;
}

function construct(dialect: Dialect, options: Options): AnyAjv {
  switch (dialect) {
    case 'draft-07':
      return new (require('ajv') as typeof import('ajv')).Ajv(options);
    case '2019-09':
      return new (require('ajv/dist/2019.js') as typeof import('ajv/dist/2019.js')).Ajv2019(options);
    case '2020-12':
      return new (require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020(options);
  }
}

export interface CompiledPair {
  /** First-error validation for the hot path. */
  readonly fast: ValidateFunction;
  /** All errors, with data and parent schema attached, to explain a failure. */
  readonly explain: ValidateFunction;
}

/** A dialect's meta-schema, to check user-supplied schemas (never compiled). */
export interface MetaCheck {
  /** Whether `schema` (without `$schema`) is valid in the dialect: ajv's `validateSchema`. */
  isValid(schema: JsonObject): boolean;
  /** Every error of an invalid schema, verbose, for translate.ts. */
  explain(schema: JsonObject): ErrorObject[];
}

export interface AjvSet {
  cardV03: CompiledPair;
  cardV10: CompiledPair;
  toolspec: CompiledPair;
  serverMeta: CompiledPair;
  /** Meta-schema checkers for user-supplied schemas, by dialect. */
  meta: Record<Dialect, MetaCheck>;
}

const instances = new Map<string, AnyAjv>();

/** The process's run-time compiler for a dialect and role, created when first needed. */
function instance(dialect: Dialect, explain: boolean): AnyAjv {
  const key = `${dialect} ${explain}`;
  let ajv = instances.get(key);
  if (!ajv) instances.set(key, (ajv = newAjv(dialect, ajvOptions(explain))));
  return ajv;
}

function dialectOf(name: SchemaName): Dialect {
  return DIALECTS.find((d) => DIALECT_SCHEMAS[d].includes(name))!;
}

/** A schema's validators, each loaded or compiled when first used. */
function compiledPair(name: SchemaName): CompiledPair {
  const dialect = dialectOf(name);
  let fast: ValidateFunction | undefined;
  let explain: ValidateFunction | undefined;
  return {
    get fast() {
      return (fast ??= precompiledValidators(dialect)?.[name] ?? instance(dialect, false).compile(loadSchemas()[name]));
    },
    get explain() {
      return (explain ??= precompiledValidators(dialect, 'explain')?.[name] ?? instance(dialect, true).compile(loadSchemas()[name]));
    },
  };
}

function metaCheck(dialect: Dialect): MetaCheck {
  let fast: ((schema: JsonObject) => boolean) | undefined;
  return {
    isValid(schema) {
      // Same as ajv.validateSchema for a schema without `$schema`: the dialect's default meta-schema.
      fast ??= precompiledValidators(dialect)?.meta ?? ((s) => instance(dialect, false).validateSchema(s) === true);
      return fast(schema);
    },
    explain(schema) {
      const precompiled = precompiledValidators(dialect, 'explain')?.meta;
      if (precompiled) {
        precompiled(schema);
        return precompiled.errors ?? [];
      }
      const ajv = instance(dialect, true);
      ajv.validateSchema(schema);
      return ajv.errors ?? [];
    },
  };
}

let memo: AjvSet | undefined;
let warmed = false;

/**
 * The process-wide validators. `eager` (the default; what a serving registry wants) makes the
 * fast validators ready now so no request pays: the precompiled modules are loaded (the explain
 * ones at the first failure, about 13 ms), or, without them, every schema and meta-schema is
 * compiled (about 0.5 s, explain validators included, as before precompilation). Without `eager`
 * each is loaded or compiled when first used, so a CLI
 * command checking one card only touches that card's dialect.
 */
export function getAjvSet(options: { eager?: boolean } = {}): AjvSet {
  memo ??= {
    cardV03: compiledPair('cardV03'),
    cardV10: compiledPair('cardV10'),
    toolspec: compiledPair('toolspec'),
    serverMeta: compiledPair('serverMeta'),
    meta: { 'draft-07': metaCheck('draft-07'), '2019-09': metaCheck('2019-09'), '2020-12': metaCheck('2020-12') },
  };
  if (options.eager !== false && !warmed) {
    warmed = true;
    for (const dialect of DIALECTS) {
      if (precompiledValidators(dialect)) continue;
      for (const name of DIALECT_SCHEMAS[dialect]) void [memo[name].fast, memo[name].explain];
      // Meta-schemas compile lazily on first use; do it now so no request pays for it (2019-09
      // is not used by any of our own schemas, so nothing else would have compiled it).
      instance(dialect, false).validateSchema({});
      instance(dialect, true).validateSchema({});
    }
  }
  return memo;
}
