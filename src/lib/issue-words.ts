/**
 * A zod issue in plain words, for the findings of every door that checks arguments with zod
 * (request-parser.ts zodFindings: A2A, MCP tools, HTTP+JSON, ARD's POST /search). Zod's own
 * messages are a programmer's ("Invalid input: expected string, received undefined" for an `id`
 * left out, "expected int, received number" for a limit of 2.5): they say neither which field nor
 * what to give. These say what is wrong, of which field, and what it takes, from the schema there.
 * In lib/ because the answers the registry checks are worded alike: an MCP server's tools/list
 * (freshness/mcp-tools.ts) and the settings read at start-up (config/config.ts).
 */
import { z } from 'zod';
import { quote } from './json.js';

/**
 * What the issue at `path` (the tokens of the arguments' JSON Pointer, then the issue's own) says, given
 * the schema there (`schema`, out of its optional wrapper: zod-paths.ts schemaAt) and the value
 * sent there (`value`, undefined when none was). Unknown keys are left to the caller, which names
 * the keys accepted.
 */
export function issueMessage(issue: z.core.$ZodIssue, path: readonly string[], schema: z.ZodType | undefined, value: unknown): string {
  const subject = subjectOf(path);
  const expected = schema ? expectation(schema) : undefined;
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return `${subject} is required: ${whatToGive(schema, expected ?? typeName(issue.expected))}`;
      return `${subject} must be ${expected ?? typeName(issue.expected)}; got ${sent(value)}`;
    case 'invalid_value':
      return `${subject} must be ${issue.values.length === 1 ? quote(issue.values[0]) : `one of ${issue.values.map((v) => quote(v)).join(', ')}`}; got ${sent(value)}`;
    case 'too_small':
    case 'too_big':
      return sizeMessage(issue, subject, expected, value);
    case 'custom':
      // The schema's own refinements are in the registry's words already (BLANK_FILTER_VALUE).
      return issue.message;
    default:
      return `${subject} is not valid: ${issue.message}`;
  }
}

/** `"limit"`, `value 0 of "tags"`, or the arguments' own name at their root ("get"); "The value" when the path names nothing. */
function subjectOf(path: readonly string[]): string {
  const last = path[path.length - 1];
  if (last === undefined || last === '') return 'The value';
  if (/^\d+$/.test(last) && path.length > 1) return `value ${last} of ${quote(path[path.length - 2])}`;
  return quote(last);
}

/** What a missing value should be: the schema's description where it has one (an MCP tool's, an entry id's), else its type. */
function whatToGive(schema: z.ZodType | undefined, expected: string): string {
  const description = schema?.description?.trim().replace(/\.$/, '');
  if (!description) return `give ${expected}`;
  return `${description.charAt(0).toLowerCase()}${description.slice(1)} (${expected})`;
}

/** What the schema takes, as a sentence's object: "a whole number from 1 to 100", `one of "agent", "mcp-server"`. */
function expectation(schema: z.ZodType): string | undefined {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return expectation(schema.unwrap() as z.ZodType);
  if (schema instanceof z.ZodString) return `a string${lengthRange(schema.minLength, schema.maxLength, 'character')}`;
  if (schema instanceof z.ZodNumber) return `${schema.isInt ? 'a whole number' : 'a number'}${numberRange(schema)}`;
  if (schema instanceof z.ZodBoolean) return 'true or false';
  if (schema instanceof z.ZodEnum) return `one of ${schema.options.map((v) => quote(v)).join(', ')}`;
  if (schema instanceof z.ZodArray) {
    const { minimum, maximum } = arrayBounds(schema);
    const noun = schema.element instanceof z.ZodString ? 'string' : 'value';
    const range = lengthRange(minimum, maximum, noun);
    return range ? `a list${range}` : `a list of ${noun}s`;
  }
  if (schema instanceof z.ZodObject || schema instanceof z.ZodRecord) return 'an object';
  return undefined;
}

/** " of 1 to 20 strings", " of at most 100 characters": nothing for bounds no JSON value could break (no minimum, or a minimum of 0). */
function lengthRange(min: number | null | undefined, max: number | null | undefined, unit: string): string {
  const lo = min ?? 0;
  const hi = max ?? undefined;
  if (hi !== undefined && lo > 0) return ` of ${lo} to ${hi} ${unit}s`;
  if (hi !== undefined) return ` of at most ${hi} ${unit}s`;
  if (lo > 0) return ` of at least ${lo} ${unit}${lo === 1 ? '' : 's'}`;
  return '';
}

/** " from 1 to 100", " of 1 or more": the schema's own bounds, without int()'s safe range, which its own words say (sizeMessage). */
function numberRange(schema: z.ZodNumber): string {
  const bound = (v: number | null) => (v === null || !Number.isFinite(v) || Math.abs(v) >= Number.MAX_SAFE_INTEGER ? undefined : v);
  const lo = bound(schema.minValue);
  const hi = bound(schema.maxValue);
  if (lo !== undefined && hi !== undefined) return ` from ${lo} to ${hi}`;
  if (lo !== undefined) return ` of ${lo} or more`;
  if (hi !== undefined) return ` of ${hi} or less`;
  return '';
}

/** An array's min and max checks (zod keeps them as checks, not on the schema). */
function arrayBounds(schema: z.ZodArray): { minimum?: number; maximum?: number } {
  const bounds: { minimum?: number; maximum?: number } = {};
  for (const check of schema._zod.def.checks ?? []) {
    const def = check._zod.def as { check: string; minimum?: number; maximum?: number };
    if (def.check === 'min_length') bounds.minimum = def.minimum;
    if (def.check === 'max_length') bounds.maximum = def.maximum;
  }
  return bounds;
}

/** A value past a bound: of the schema where its expectation says it ("from 1 to 100"), else the issue's own. */
function sizeMessage(issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall, subject: string, expected: string | undefined, value: unknown): string {
  const big = issue.code === 'too_big';
  const bound = Number(big ? (issue as z.core.$ZodIssueTooBig).maximum : (issue as z.core.$ZodIssueTooSmall).minimum);
  if (issue.origin === 'int') {
    // Past int()'s safe range where the schema sets no bound of its own (a revision of 1e300).
    return `${subject} must be ${expected ?? 'a whole number'}, ${big ? 'at most' : 'at least'} ${bound} (${big ? '2^53 - 1' : '-(2^53 - 1)'}); got ${sent(value)}`;
  }
  // A bound the schema keeps in a check of its own (a query's, counted in code points) is not in
  // its expectation: the issue's bound is said instead.
  if (expected !== undefined && !new RegExp(`\\b${bound}\\b`).test(expected)) expected = undefined;
  switch (issue.origin) {
    case 'string':
      if (!big && bound === 1) return `${subject} must not be empty${expected ? `: give ${expected}` : ''}`;
      return `${subject} must be ${expected ?? `a string of ${big ? 'at most' : 'at least'} ${bound} characters`}; got one ${big ? 'longer' : 'shorter'}`;
    case 'array': {
      const count = Array.isArray(value) ? `${value.length} value${value.length === 1 ? '' : 's'}` : undefined;
      return `${subject} must be ${expected ?? `a list of ${big ? 'at most' : 'at least'} ${bound} values`}${count ? `; got ${count}` : ''}`;
    }
    default:
      return `${subject} must be ${expected ?? `${big ? 'at most' : 'at least'} ${bound}`}; got ${sent(value)}`;
  }
}

/** The value sent, as a message names it: `the string "20"`, `the number 2.5`, `a list`. */
function sent(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return value === '' ? 'an empty string' : `the string ${quote(value)}`;
    case 'number':
      return `the number ${String(value)}`;
    case 'boolean':
      return String(value);
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** zod's name of a type (`expected`) in plain words, where the schema there is unknown. */
function typeName(expected: string): string {
  const names: Record<string, string> = { string: 'a string', number: 'a number', int: 'a whole number', boolean: 'true or false', array: 'a list', object: 'an object', record: 'an object' };
  return names[expected] ?? expected;
}
