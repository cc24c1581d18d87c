/**
 * Turns ajv errors into findings people can act on:
 * - every finding has a JSON Pointer path into the document; a `required` error points at the
 *   missing member itself ("/skills/0/tags"), not at its parent;
 * - union noise is collapsed: a failed `oneOf` of "exactly one of these members" becomes one
 *   finding naming the members, instead of one `required` error per branch; ajv's `if` errors
 *   (which only repeat that a `then` failed) are dropped; a failed `anyOf` keeps one finding;
 * - messages say what was expected and what was found, in words rather than ajv keywords;
 * - a caller-supplied `hint` function adds specific advice for known real-world mistakes.
 * Expects errors from an `allErrors` + `verbose` validator (data and parentSchema attached).
 */
import type { ErrorObject } from 'ajv';
import type { Finding } from '../contract/types.js';
import { describeJsonType, escapePointerToken, isObject, quote } from '../lib/json.js';
import { genericHint } from './generic-hints.js';
import { definitionOwner } from './schema-files.js';

/** One ajv error in plain terms, given to hint functions. */
export interface Issue {
  keyword: string;
  /** Pointer (relative to the validated value) of what the finding is about. */
  path: string;
  /** Pointer of the object that holds the problem (for `required`, the object missing a member). */
  at: string;
  /** Name of the schema definition the failing keyword belongs to ("AgentSkill"), if any. */
  definition?: string;
  /** The value at `at`. */
  data: unknown;
  params: Record<string, unknown>;
  /** Default message. */
  message: string;
}

export type HintFn = (issue: Issue) => Partial<Pick<Finding, 'message' | 'hint' | 'rule'>> | undefined;

const RULES: Record<string, string> = {
  required: 'required',
  type: 'type',
  minItems: 'min-items',
  minLength: 'min-length',
  enum: 'enum',
  const: 'const',
  pattern: 'pattern',
  format: 'format',
  oneOf: 'one-of',
  anyOf: 'any-of',
  not: 'not-allowed',
  'false schema': 'not-allowed',
  additionalProperties: 'unknown-field',
  uniqueItems: 'unique-items',
};


const article = (type: string): string =>
  type
    .split(',')
    .map((t) => (t === 'null' ? 'null' : /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`))
    .join(' or ');

/** Members named by a oneOf whose branches are `{required: [name]}`. */
function oneOfMembers(parentSchema: unknown): string[] | undefined {
  if (!isObject(parentSchema) || !Array.isArray(parentSchema.oneOf)) return undefined;
  const names: string[] = [];
  for (const branch of parentSchema.oneOf) {
    if (!isObject(branch) || !Array.isArray(branch.required) || branch.required.length !== 1) return undefined;
    names.push(String(branch.required[0]));
  }
  return names;
}

function defaultMessage(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `required field ${quote(p.missingProperty)} is missing`;
    case 'type':
      return `must be ${article(String(p.type))}, found ${describeJsonType(e.data)}`;
    case 'minItems':
      return p.limit === 1 ? 'must not be empty' : `must have at least ${String(p.limit)} items`;
    case 'minLength':
      return p.limit === 1 ? 'must not be an empty string' : `must be at least ${String(p.limit)} characters long`;
    case 'enum':
      return `must be one of ${(Array.isArray(p.allowedValues) ? p.allowedValues : []).map((v) => quote(v)).join(', ')}; found ${quote(e.data)}`;
    case 'const':
      return `must be ${quote(p.allowedValue)}; found ${quote(e.data)}`;
    case 'pattern':
      return `${quote(e.data)} does not have the expected form`;
    case 'format':
      return `must be a valid ${String(p.format)}; found ${quote(e.data)}`;
    case 'not':
    case 'false schema':
      return 'is not allowed here';
    case 'additionalProperties':
      return `unknown field ${quote(p.additionalProperty)}`;
    case 'uniqueItems':
      return `must not contain duplicates (items ${String(p.j)} and ${String(p.i)} are equal)`;
    default:
      return e.message ?? `fails the "${e.keyword}" check`;
  }
}

function collapseUnions(errors: ErrorObject[]): ErrorObject[] {
  const drop = new Set<ErrorObject>();
  // Branch errors of a oneOf sit at the same instancePath under the oneOf's schemaPath; group
  // by instancePath so a document with many unions stays linear.
  const byPath = new Map<string, ErrorObject[]>();
  for (const e of errors) {
    const group = byPath.get(e.instancePath);
    if (group) group.push(e);
    else byPath.set(e.instancePath, [e]);
  }
  errors.forEach((e, index) => {
    if (e.keyword === 'if') drop.add(e);
    if (e.keyword === 'oneOf') {
      const prefix = e.schemaPath + '/';
      for (const other of byPath.get(e.instancePath) ?? []) {
        if (other !== e && other.schemaPath.startsWith(prefix)) drop.add(other);
      }
    }
    if (e.keyword === 'anyOf') {
      // Branches may be $refs (their schemaPath names the referenced definition), so use
      // position instead: ajv reports branch errors right before the anyOf error.
      for (let i = index - 1; i >= 0; i--) {
        const other = errors[i]!;
        const inside = other.instancePath === e.instancePath || other.instancePath.startsWith(e.instancePath + '/');
        if (!inside) break;
        drop.add(other);
      }
    }
  });
  return errors.filter((e) => !drop.has(e));
}

/**
 * Only this many ajv errors are translated: findings are cut to MAX_FINDINGS anyway, and an
 * operator may raise the size limit far enough for allErrors to report many thousands.
 */
const MAX_AJV_ERRORS = 1_000;

/** Converts ajv errors (from a verbose, allErrors validator) into findings under `basePath`. */
export function translateAjvErrors(errors: readonly ErrorObject[], basePath: string, hint?: HintFn): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const e of collapseUnions(errors.slice(0, MAX_AJV_ERRORS))) {
    const params = e.params as Record<string, unknown>;
    let path = e.instancePath;
    let message = defaultMessage(e);
    if (e.keyword === 'required') path = `${e.instancePath}/${escapePointerToken(String(params.missingProperty))}`;
    if (e.keyword === 'additionalProperties') path = `${e.instancePath}/${escapePointerToken(String(params.additionalProperty))}`;
    if (e.keyword === 'oneOf') {
      const members = oneOfMembers(e.parentSchema);
      const passing = Array.isArray(params.passingSchemas) ? (params.passingSchemas as number[]) : undefined;
      if (members && passing) {
        message = `has ${passing.map((i) => quote(members[i])).join(' and ')}; exactly one of them is allowed`;
      } else if (members) {
        message = `must contain exactly one of ${members.map((m) => quote(m)).join(', ')}`;
      } else {
        message = 'must match exactly one of the allowed forms';
      }
    }
    if (e.keyword === 'anyOf') message = 'does not match any of the allowed forms';
    const issue: Issue = {
      keyword: e.keyword,
      path,
      at: e.instancePath,
      definition: definitionOwner(e.parentSchema),
      data: e.data,
      params,
      message,
    };
    const extra = hint?.(issue);
    const finding: Finding = { path: basePath + path, message: extra?.message ?? message };
    const hintText = extra?.hint ?? genericHint(e);
    if (hintText) finding.hint = hintText;
    finding.rule = extra?.rule ?? RULES[e.keyword] ?? e.keyword;
    const key = `${finding.path}\u0000${finding.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(finding);
    }
  }
  return out;
}
