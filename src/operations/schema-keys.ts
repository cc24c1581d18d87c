/**
 * The keys an object of a request schema takes, at a path inside it: what a BAD_REQUEST for an
 * unknown key (`{"filter": {"onwer": "bob"}}`) offers instead, so the caller learns how to fix it
 * and not only that the key is wrong. And the schema there, for the findings it words itself.
 */
import { z } from 'zod';

/** The object keys `schema` accepts at `path` (zod issue path), or undefined when it is no object there. */
export function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] | undefined {
  const at = schemaAt(schema, path);
  return at instanceof z.ZodObject ? Object.keys(at.shape) : undefined;
}

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
