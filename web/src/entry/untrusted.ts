/**
 * Reading registered documents, which are only as well-formed as the registry's validation
 * made them (and v0.3 and v1.0 cards differ): every accessor checks the type it returns.
 */
import { showBidiControls } from '../foreign';

export type Json = Record<string, unknown>;

export const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
export const strings = (v: unknown): string[] => arr(v).filter((s): s is string => typeof s === 'string');
export const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

/** A JSON value as people read it: strings bare, everything else as JSON. */
export const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * A JSON value as its document has it, indented, with the bidirectional controls (and the
 * invisible marks) written as \uXXXX escapes: the same JSON (they can only stand inside
 * strings), which reads as it is. Shown as they are, they reorder the text around them, so a
 * schema could read otherwise than it is. Validation refuses or warns about them where a
 * document's texts are shown as text; in a schema's nested members they are kept.
 */
export const pretty = (v: unknown): string => showBidiControls(JSON.stringify(v, null, 2) ?? '');
