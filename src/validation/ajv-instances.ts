/**
 * The ajv instances and compiled validators, built once per process.
 *
 * - One instance per JSON Schema dialect (draft-07, 2019-09, 2020-12): ajv cannot mix dialects
 *   in one instance. Draft-07 compiles the v0.3 card schema (the official one is draft-07);
 *   2020-12 compiles the v1.0 card, toolspec and server-metadata schemas. All three also serve
 *   as meta-schema checkers for tool input/output schemas (`validateSchema`, never `compile`).
 * - Each dialect exists twice: a fast instance (stops at the first error) for the common path,
 *   and an `allErrors` + `verbose` instance used only to explain a failure. `allErrors` on
 *   untrusted input defeats the early exits that keep validation cheap, so it only ever runs on
 *   documents that already failed and are already known to be within the size limit.
 * - Compiled validators are memoised at module level: ajv caches by object identity, so
 *   compiling per validator instance (or per request) would only burn time and memory. A
 *   serving registry compiles them all at start-up; the CLI each as it first needs it.
 */
import { Ajv, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { loadSchemas } from './schema-files.js';

const addFormats = addFormatsModule.default;

export type Dialect = 'draft-07' | '2019-09' | '2020-12';
type AnyAjv = Ajv | Ajv2019 | Ajv2020;

/** JSON Schema `pattern`s use ECMA-262 with the `u` flag (ajv's default, `unicodeRegExp`). Only compiled, never run. */
export function isValidRegex(source: string): boolean {
  try {
    new RegExp(source, 'u');
    return true;
  } catch {
    return false;
  }
}

function configure<T extends AnyAjv>(ajv: T): T {
  addFormats(ajv);
  // ajv-formats checks "regex" without the u flag; use the flag schemas are evaluated with.
  ajv.addFormat('regex', isValidRegex);
  return ajv;
}

function makeInstance(dialect: Dialect, explain: boolean): AnyAjv {
  // strict: our own schemas must not contain typos; user schemas are never compiled, and
  // validateSchema does not apply strict mode, so this never rejects a peer's schema.
  const base: Options = { strict: true, strictRequired: false };
  const options: Options = explain ? { ...base, allErrors: true, verbose: true } : base;
  switch (dialect) {
    case 'draft-07':
      return configure(new Ajv(options));
    case '2019-09':
      return configure(new Ajv2019(options));
    case '2020-12':
      return configure(new Ajv2020(options));
  }
}

export interface CompiledPair {
  /** First-error validation for the hot path. */
  fast: ValidateFunction;
  /** All errors, with data and parent schema attached, to explain a failure. */
  explain: ValidateFunction;
}

export interface AjvSet {
  cardV03: CompiledPair;
  cardV10: CompiledPair;
  toolspec: CompiledPair;
  serverMeta: CompiledPair;
  /** Meta-schema checkers for user-supplied schemas, by dialect. */
  meta: Record<Dialect, { fast: AnyAjv; explain: AnyAjv }>;
}

/** A schema's validators, each compiled when first used. */
function compiledPair(instances: { fast: AnyAjv; explain: AnyAjv }, schema: object): CompiledPair {
  let fast: ValidateFunction | undefined;
  let explain: ValidateFunction | undefined;
  return {
    get fast() {
      return (fast ??= instances.fast.compile(schema));
    },
    get explain() {
      return (explain ??= instances.explain.compile(schema));
    },
  };
}

let memo: AjvSet | undefined;
let compiledAll = false;

/**
 * The process-wide validators. `eager` (the default; what a serving registry wants) compiles
 * every schema now, about 0.25 s, so no request pays for it; without it each compiles when first
 * used, so a CLI command checking one card compiles only that card's schema.
 */
export function getAjvSet(options: { eager?: boolean } = {}): AjvSet {
  memo ??= build();
  if (options.eager !== false && !compiledAll) {
    compiledAll = true;
    for (const pair of [memo.cardV03, memo.cardV10, memo.toolspec, memo.serverMeta]) void [pair.fast, pair.explain];
    // Meta-schemas compile lazily on first use; do it now so no request pays for it (2019-09
    // is not used by any of our own schemas, so nothing else would have compiled it).
    for (const instances of Object.values(memo.meta)) {
      instances.fast.validateSchema({});
      instances.explain.validateSchema({});
    }
  }
  return memo;
}

function build(): AjvSet {
  const schemas = loadSchemas();
  const meta = {
    'draft-07': { fast: makeInstance('draft-07', false), explain: makeInstance('draft-07', true) },
    '2019-09': { fast: makeInstance('2019-09', false), explain: makeInstance('2019-09', true) },
    '2020-12': { fast: makeInstance('2020-12', false), explain: makeInstance('2020-12', true) },
  };
  return {
    cardV03: compiledPair(meta['draft-07'], schemas.cardV03),
    cardV10: compiledPair(meta['2020-12'], schemas.cardV10),
    toolspec: compiledPair(meta['2020-12'], schemas.toolspec),
    serverMeta: compiledPair(meta['2020-12'], schemas.serverMeta),
    meta,
  };
}
