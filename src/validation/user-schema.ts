/**
 * Checks a tool's `inputSchema` / `outputSchema` as a JSON Schema, safely. These schemas come
 * from peers and are untrusted, so:
 * - nothing is compiled: ajv.validateSchema checks them against their dialect's meta-schema
 *   (compiling is slow for large schemas, and compiled patterns could be run);
 * - size and depth are capped before ajv sees the value (deep nesting overflows ajv's stack);
 * - every `pattern` and `patternProperties` key is checked for syntax with `new RegExp(p, 'u')`
 *   and never run (validateSchema does not look at pattern syntax, and a pattern like
 *   `^(a+)+$` only hurts when it runs);
 * - `$ref`s must be local ("#…"); a remote `$ref` is an error, never fetched.
 * The dialect is the one the schema declares in `$schema`: draft-07, 2019-09 or 2020-12, and
 * 2020-12 when absent (MCP 2025-11-25 and later). Anything else is an error naming those.
 */
import type { Finding } from '../contract/types.js';
import { getAjvSet, type Dialect } from './ajv-instances.js';
import { isValidRegex } from './formats.js';
import { escapePointerToken, isObject, quote, resolvePointer, type JsonObject } from '../lib/json.js';
import { translateAjvErrors, type HintFn, type Issue } from './translate.js';

export const USER_SCHEMA_LIMITS = {
  /** JSON nesting levels (objects and arrays) inside one schema. */
  maxDepth: 64,
  /** JSON values (every object, array and scalar) inside one schema. */
  maxNodes: 10_000,
  /** Findings reported per schema, so one broken schema cannot flood the answer. */
  maxFindings: 10,
};

const DIALECT_URIS: Record<string, Dialect> = {
  'json-schema.org/draft-07/schema': 'draft-07',
  'json-schema.org/draft/2019-09/schema': '2019-09',
  'json-schema.org/draft/2020-12/schema': '2020-12',
};

export const SUPPORTED_DIALECTS_TEXT =
  'draft-07 ("http://json-schema.org/draft-07/schema#"), 2019-09 ("https://json-schema.org/draft/2019-09/schema") or 2020-12 ("https://json-schema.org/draft/2020-12/schema", also the default when "$schema" is absent)';

/** The dialect a `$schema` value names (http/https and a trailing "#" are tolerated). */
export function dialectOf(schemaUri: unknown): Dialect | undefined {
  if (schemaUri === undefined) return '2020-12';
  if (typeof schemaUri !== 'string') return undefined;
  const m = /^https?:\/\/(.*?)#?$/.exec(schemaUri.trim());
  return m ? DIALECT_URIS[m[1]!] : undefined;
}

/** Iterative measure of depth and size (no recursion, so it cannot overflow on hostile input). */
function measure(root: unknown): 'depth' | 'size' | undefined {
  const { maxDepth, maxNodes } = USER_SCHEMA_LIMITS;
  const nodes: unknown[] = [root];
  const depths: number[] = [1];
  let count = 0;
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop()!;
    if (++count > maxNodes) return 'size';
    if (typeof node !== 'object' || node === null) continue;
    if (depth > maxDepth) return 'depth';
    if (Array.isArray(node)) {
      for (const child of node) {
        nodes.push(child);
        depths.push(depth + 1);
      }
    } else {
      for (const key in node) {
        nodes.push((node as JsonObject)[key]);
        depths.push(depth + 1);
      }
    }
  }
  return undefined;
}

/** Keywords whose value is a schema, an array of schemas, or a map of name -> schema. */
const SCHEMA_KEYWORDS = new Set([
  'additionalItems', 'additionalProperties', 'contains', 'contentSchema', 'else', 'if', 'items', 'not',
  'propertyNames', 'then', 'unevaluatedItems', 'unevaluatedProperties',
]);
const SCHEMA_ARRAY_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
const SCHEMA_MAP_KEYWORDS = new Set(['$defs', 'definitions', 'dependentSchemas', 'patternProperties', 'properties', 'dependencies']);
const REF_KEYWORDS = ['$ref', '$dynamicRef', '$recursiveRef'];
const ANCHOR_KEYWORDS = ['$anchor', '$dynamicAnchor'];

interface WalkState {
  findings: Finding[];
  refs: Array<{ ref: string; path: string }>;
  anchors: Set<string>;
  ids: Set<string>;
  nestedBase: boolean;
}

function walkSchema(node: unknown, path: string, state: WalkState, isRoot: boolean): void {
  if (!isObject(node)) return; // booleans are schemas too; anything else is for the meta-schema to report
  if (typeof node.$id === 'string') {
    if (node.$id.startsWith('#')) state.anchors.add(node.$id.slice(1));
    else {
      state.ids.add(node.$id);
      if (!isRoot) state.nestedBase = true;
    }
  }
  for (const k of ANCHOR_KEYWORDS) if (typeof node[k] === 'string') state.anchors.add(node[k] as string);
  for (const k of REF_KEYWORDS) if (typeof node[k] === 'string') state.refs.push({ ref: node[k] as string, path: `${path}/${k}` });
  if (typeof node.pattern === 'string' && !isValidRegex(node.pattern)) {
    state.findings.push({
      path: `${path}/pattern`,
      rule: 'bad-pattern',
      message: `${quote(node.pattern)} is not a valid regular expression (ECMA-262 with the "u" flag)`,
      hint: 'Fix the regular expression; JSON Schema patterns are evaluated as JavaScript regular expressions in Unicode mode.',
    });
  }
  // Keyword names are not escaped: the ones recursed into contain no "~" or "/".
  for (const key in node) {
    const value = node[key];
    if (SCHEMA_MAP_KEYWORDS.has(key)) {
      if (!isObject(value)) continue;
      for (const name in value) {
        const here = `${path}/${key}/${escapePointerToken(name)}`;
        if (key === 'patternProperties' && !isValidRegex(name)) {
          state.findings.push({
            path: here,
            rule: 'bad-pattern',
            message: `patternProperties key ${quote(name)} is not a valid regular expression (ECMA-262 with the "u" flag)`,
          });
        }
        // `dependencies` (draft-07) maps to a schema or to an array of property names.
        walkSchema(value[name], here, state, false);
      }
    } else if (SCHEMA_ARRAY_KEYWORDS.has(key) && Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) walkSchema(value[i], `${path}/${key}/${i}`, state, false);
    } else if (SCHEMA_KEYWORDS.has(key)) {
      walkSchema(value, `${path}/${key}`, state, false);
    }
    // Everything else (enum, const, default, examples, annotations, unknown keywords) is data.
  }
}

function checkRefs(root: JsonObject, basePath: string, state: WalkState): void {
  for (const { ref, path } of state.refs) {
    if (state.ids.has(ref)) continue; // refers to a subschema of this document by its $id
    if (!ref.startsWith('#')) {
      state.findings.push({
        path: basePath + path,
        rule: 'remote-ref',
        message: `${quote(ref)} refers outside this schema; remote references are not followed`,
        hint: 'Inline the referenced schema under "$defs" and refer to it as "#/$defs/<name>".',
      });
      continue;
    }
    if (state.nestedBase) continue; // a nested $id changes what "#…" means; leave resolution alone
    let fragment: string;
    try {
      fragment = decodeURIComponent(ref.slice(1));
    } catch {
      fragment = ref.slice(1);
    }
    const resolves = fragment === '' || fragment.startsWith('/') ? resolvePointer(root, fragment) !== undefined : state.anchors.has(fragment);
    if (!resolves) {
      state.findings.push({
        path: basePath + path,
        rule: 'unresolved-ref',
        message: `${quote(ref)} does not resolve to anything inside this schema`,
        hint: 'Point it at an existing definition, e.g. "#/$defs/<name>".',
      });
    }
  }
}

const JSON_SCHEMA_TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'];
/** Type names tool authors bring from their language (Python, TypeScript, Go...) and what JSON Schema calls them. */
const TYPE_ALIASES: Record<string, string> = {
  str: 'string', text: 'string', char: 'string',
  int: 'integer', long: 'integer', int32: 'integer', int64: 'integer',
  float: 'number', double: 'number', decimal: 'number',
  bool: 'boolean',
  list: 'array', tuple: 'array', set: 'array',
  dict: 'object', map: 'object', record: 'object', obj: 'object',
  none: 'null', nil: 'null',
};

/** "String" -> "string", "str" -> "string"; undefined for names with no clear meaning. */
function jsonSchemaType(name: unknown): string | undefined {
  if (typeof name !== 'string') return undefined;
  const key = name.trim().toLowerCase();
  if (JSON_SCHEMA_TYPES.includes(key)) return key;
  return Object.hasOwn(TYPE_ALIASES, key) ? TYPE_ALIASES[key] : undefined; // not "constructor" from the prototype
}

/** The corrected `type` value, when every name in it has a clear JSON Schema meaning. */
function typeSuggestion(value: unknown): string | undefined {
  const names = Array.isArray(value) ? value : [value];
  const fixed = names.map(jsonSchemaType);
  if (fixed.some((t) => t === undefined)) return undefined;
  return JSON.stringify(Array.isArray(value) ? fixed : fixed[0]);
}

/** Plainer words for meta-schema failures, and the draft-03 habit of `"required": true`. */
function metaHint(issue: Issue, dialect: Dialect): ReturnType<HintFn> {
  if (issue.path.endsWith('/type') && (issue.keyword === 'anyOf' || issue.keyword === 'enum')) {
    const suggestion = typeSuggestion(issue.data);
    return {
      rule: 'invalid-schema',
      message: `must be a JSON Schema type ("array", "boolean", "integer", "null", "number", "object", "string") or an array of them; found ${quote(issue.data)}`,
      hint: suggestion
        ? `Did you mean "type": ${suggestion}? JSON Schema has its own type names, all lower case.`
        : 'Use one of the seven JSON Schema type names, in lower case; describe formats such as dates with "format" (e.g. "type": "string", "format": "date").',
    };
  }
  const draft03 = /\/properties\/([^/]+)\/required$/.exec(issue.path);
  if (draft03 && typeof issue.data === 'boolean') {
    const name = draft03[1]!.replace(/~1/g, '/').replace(/~0/g, '~');
    return {
      rule: 'invalid-schema',
      message: `"required" must be an array of property names in ${dialect}; found ${quote(issue.data)}`,
      hint: `"required": true is draft-03 style: remove it and list the property on the parent object instead, e.g. "required": [${quote(name)}].`,
    };
  }
  return { rule: 'invalid-schema', message: `not a valid ${dialect} JSON Schema here: ${issue.message}` };
}

/**
 * Findings for one tool schema at `basePath` (e.g. "/toolspec/tools/0/inputSchema"). The root
 * shape (an object, `type: "object"` for input schemas) is checked by the toolspec schema.
 */
export function checkUserSchema(schema: unknown, basePath: string): Finding[] {
  if (!isObject(schema)) return [];
  const dialect = dialectOf(schema.$schema);
  if (!dialect) {
    if (typeof schema.$schema !== 'string') return []; // the toolspec schema reports the type
    return [
      {
        path: `${basePath}/$schema`,
        rule: 'unsupported-dialect',
        message: `JSON Schema dialect ${quote(schema.$schema)} is not supported; supported dialects are draft-07, 2019-09 and 2020-12`,
        hint: `Declare ${SUPPORTED_DIALECTS_TEXT}, and make the schema follow it.`,
      },
    ];
  }
  const tooBig = measure(schema);
  if (tooBig) {
    const { maxDepth, maxNodes } = USER_SCHEMA_LIMITS;
    return [
      {
        path: basePath,
        rule: tooBig === 'depth' ? 'schema-too-deep' : 'schema-too-large',
        message:
          tooBig === 'depth'
            ? `the schema nests deeper than ${maxDepth} levels`
            : `the schema has more than ${maxNodes.toLocaleString('en-US')} JSON values`,
        hint: 'Flatten it, or move repeated parts into "$defs" and refer to them with "$ref".',
      },
    ];
  }
  const state: WalkState = { findings: [], refs: [], anchors: new Set(), ids: new Set(), nestedBase: false };
  walkSchema(schema, '', state, true);
  // Walk findings carry paths relative to the schema; rebase them.
  state.findings = state.findings.map((f) => ({ ...f, path: basePath + f.path }));
  checkRefs(schema, basePath, state);
  if (state.findings.length > 0) return state.findings.slice(0, USER_SCHEMA_LIMITS.maxFindings);

  // Only now, bounded and free of bad patterns and remote refs, does ajv see it. The `$schema`
  // member is left out because it is what picked the instance (ajv would otherwise try to
  // look it up by URI, and spellings like "…/schema" without "#" differ from its key).
  const { $schema: _declared, ...body } = schema;
  // Not eager: the registry's validators readied everything at start-up; a CLI command loads what it uses.
  const meta = getAjvSet({ eager: false }).meta[dialect];
  if (meta.isValid(body)) return [];
  const findings = translateAjvErrors(meta.explain(body), basePath, (issue) => metaHint(issue, dialect));
  return findings.slice(0, USER_SCHEMA_LIMITS.maxFindings);
}
