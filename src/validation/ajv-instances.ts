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
 *   compiling per validator instance (or per request) would only burn time and memory.
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

let memo: AjvSet | undefined;

/** Builds (first call) or returns the process-wide compiled validators. */
export function getAjvSet(): AjvSet {
  if (memo) return memo;
  const schemas = loadSchemas();
  const meta = {
    'draft-07': { fast: makeInstance('draft-07', false), explain: makeInstance('draft-07', true) },
    '2019-09': { fast: makeInstance('2019-09', false), explain: makeInstance('2019-09', true) },
    '2020-12': { fast: makeInstance('2020-12', false), explain: makeInstance('2020-12', true) },
  };
  const pair = (dialect: 'draft-07' | '2020-12', schema: object): CompiledPair => ({
    fast: meta[dialect].fast.compile(schema),
    explain: meta[dialect].explain.compile(schema),
  });
  // Meta-schemas compile lazily on first use; do it now so no request pays for it (2019-09
  // is not used by any of our own schemas, so nothing else would have compiled it).
  for (const pair of Object.values(meta)) {
    pair.fast.validateSchema({});
    pair.explain.validateSchema({});
  }
  memo = {
    cardV03: pair('draft-07', schemas.cardV03),
    cardV10: pair('2020-12', schemas.cardV10),
    toolspec: pair('2020-12', schemas.toolspec),
    serverMeta: pair('2020-12', schemas.serverMeta),
    meta,
  };
  return memo;
}
