/**
 * Where a zod issue points: the schema there and the value sent there, found by the path.
 * What a refusal's words are made of (issue-words.ts): the schema says what the field takes, the
 * value what came. Operation arguments (operations/request-parser.ts) and a remote MCP server's
 * tools/list answer (freshness/mcp-tools.ts) are worded alike from them.
 */
import { z } from 'zod';
import { isObject } from './json.js';

/** The schema `schema` has at `path` (zod issue path), out of its optional and nullable wrappers, or undefined when it has none there. */
export function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let at: z.ZodType = schema;
  for (let i = 0; ; i++) {
    // Optional and nullable wrappers say nothing about the keys.
    while (at instanceof z.ZodOptional || at instanceof z.ZodNullable) at = at.unwrap() as z.ZodType;
    if (i === path.length) return at;
    const step = path[i];
    if (at instanceof z.ZodObject && typeof step === 'string' && step in at.shape) at = at.shape[step] as z.ZodType;
    else if (at instanceof z.ZodArray && typeof step === 'number') at = at.element as z.ZodType;
    else return undefined;
  }
}

/** The value at a Zod issue's path in what was parsed (undefined where it leads nowhere). */
export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let at = input;
  for (const key of path) {
    if (Array.isArray(at) && typeof key === 'number') at = at[key];
    else if (isObject(at) && typeof key === 'string' && Object.hasOwn(at, key)) at = at[key];
    else return undefined;
  }
  return at;
}
