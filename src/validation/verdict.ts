/** Builds verdicts: bounded finding lists and the one-line message people read first. */
import type { EntryKind, Finding } from '../contract/types.js';
import { formatBytes } from './size.js';
import { MAX_FINDINGS, type Generation, type Verdict } from './types.js';

export function bound(findings: Finding[]): Finding[] {
  return findings.length > MAX_FINDINGS ? findings.slice(0, MAX_FINDINGS) : findings;
}

export function accepted(kind: EntryKind, sizeBytes: number, warnings: Finding[], generation?: Generation): Verdict {
  const v: Verdict = { valid: true, kind, sizeBytes, errors: [], warnings: bound(warnings) };
  if (generation) v.generation = generation;
  return v;
}

export function rejected(
  kind: EntryKind,
  code: NonNullable<Verdict['errorCode']>,
  message: string,
  sizeBytes: number,
  errors: Finding[],
  warnings: Finding[],
  generation?: Generation,
): Verdict {
  const v: Verdict = { valid: false, kind, errorCode: code, message, sizeBytes, errors: bound(errors), warnings: bound(warnings) };
  if (generation) v.generation = generation;
  return v;
}

/**
 * What people are told about a document over the size limit, on every door (a validated
 * document here, an A2A file part refused before it is handed on): when the compact form fits,
 * minifying is all it takes, and saying "shorten descriptions" would send them the wrong way.
 */
export function sizeAdvice(label: string, sizeBytes: number, limit: number, compactBytes?: number): { message: string; hint: string } {
  if (compactBytes !== undefined && compactBytes <= limit) {
    return {
      message: `The ${label} is ${formatBytes(sizeBytes)}; the limit is ${formatBytes(limit)}. Without whitespace it is ${formatBytes(compactBytes)}: send it minified (or as a data part, which is measured compactly).`,
      hint: `Minified it is ${formatBytes(compactBytes)}, within the limit: remove the indentation, or send the document as a data part.`,
    };
  }
  return {
    message: `The ${label} is ${formatBytes(sizeBytes)}; the limit is ${formatBytes(limit)}. Shorten descriptions, drop unused fields or split it, then send it again.`,
    hint: 'Shorten descriptions and examples, or remove fields the registry does not need.',
  };
}

/**
 * The finding of a document over the size limit, at `path`: the document's root in a verdict,
 * the part that carries it in a message (request-parser.ts), the same rule and words either way.
 */
export function tooLargeFinding(path: string, sizeBytes: number, limit: number, hint: string): Finding {
  return { path, rule: 'too-large', message: `${formatBytes(sizeBytes)} exceeds the limit of ${formatBytes(limit)}`, hint };
}

export function tooLarge(kind: EntryKind, label: string, sizeBytes: number, limit: number, compactBytes?: number): Verdict {
  const { message, hint } = sizeAdvice(label, sizeBytes, limit, compactBytes);
  return rejected(kind, 'TOO_LARGE', message, sizeBytes, [tooLargeFinding('', sizeBytes, limit, hint)], []);
}

/** "…is not valid: 3 errors. First: /skills/0/tags: required field "tags" is missing (Add …)." */
export function failureMessage(label: string, errors: Finding[]): string {
  const first = errors[0];
  if (!first) return `The ${label} is not valid.`;
  const count = errors.length >= MAX_FINDINGS ? `${MAX_FINDINGS} or more errors` : `${errors.length} error${errors.length === 1 ? '' : 's'}`;
  const where = first.path === '' ? '(document root)' : first.path;
  const tail = first.hint ? ` ${first.hint}` : '';
  const more = errors.length > 1 ? ' See the details for every error.' : '';
  return `The ${label} is not valid (${count}). ${where}: ${first.message}.${tail}${more}`;
}
