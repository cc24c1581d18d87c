/**
 * Reading registered documents, which are only as well-formed as the registry's validation
 * made them (and v0.3 and v1.0 cards differ): every accessor checks the type it returns.
 */
export type Json = Record<string, unknown>;

export const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
export const strings = (v: unknown): string[] => arr(v).filter((s): s is string => typeof s === 'string');
export const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

/** A JSON value as people read it: strings bare, everything else as JSON. */
export const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

export const pretty = (v: unknown): string => JSON.stringify(v, null, 2) ?? '';
