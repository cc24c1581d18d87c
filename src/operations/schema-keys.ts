/**
 * The keys an object of a request schema takes, at a path inside it: what a BAD_REQUEST for an
 * unknown key (`{"filter": {"onwer": "bob"}}`) offers instead, so the caller learns how to fix it
 * and not only that the key is wrong. (The schema there is lib/zod-paths.ts's schemaAt.)
 */
import { z } from 'zod';
import { schemaAt } from '../lib/zod-paths.js';

/** The object keys `schema` accepts at `path` (zod issue path), or undefined when it is no object there. */
export function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] | undefined {
  const at = schemaAt(schema, path);
  return at instanceof z.ZodObject ? Object.keys(at.shape) : undefined;
}
