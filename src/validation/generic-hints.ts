/**
 * The hint a finding gets when no advice for a known mistake applies (./hints.ts): what to
 * write instead, worked out from the ajv error itself. Every error a person reads should say how
 * to fix it; "must be a boolean, found a string" alone leaves them to guess that the quotes
 * around true are the problem.
 */
import type { ErrorObject } from 'ajv';
import { isObject, quote } from '../lib/json.js';

/** The allowed value `found` differs from only in letter case, if any: enums are case-sensitive. */
function sameButCase(found: unknown, allowed: readonly unknown[]): unknown {
  if (typeof found !== 'string') return undefined;
  return allowed.find((a) => typeof a === 'string' && a !== found && a.toLowerCase() === found.toLowerCase());
}

function typeHint(expected: string, found: unknown): string {
  const types = expected.split(',');
  if (typeof found === 'string') {
    const trimmed = found.trim();
    if (types.includes('boolean') && (trimmed === 'true' || trimmed === 'false')) return `Write ${trimmed} without quotes.`;
    if ((types.includes('integer') || types.includes('number')) && trimmed !== '' && Number.isFinite(Number(trimmed))) {
      return `Write ${trimmed} without quotes.`;
    }
    if (types.includes('array')) return `Use an array: [${quote(found)}].`;
  }
  if (types.includes('string') && (typeof found === 'number' || typeof found === 'boolean')) return `Put the value in quotes: "${String(found)}".`;
  if (types.includes('boolean')) return 'Write true or false, without quotes.';
  if (types.includes('integer') || types.includes('number')) return 'Write a number, without quotes.';
  if (types.includes('array') && isObject(found)) return 'Wrap it in an array: [{…}].';
  if (types.includes('object') && Array.isArray(found)) return 'Use a JSON object {"…": …} here, not a list.';
  if (types.includes('object')) return 'Use a JSON object {"…": …} here.';
  if (types.includes('array')) return 'Use an array [ … ] here.';
  return `Change the value to ${types.length > 1 ? `one of: ${types.join(', ')}` : `a JSON ${types[0]}`}.`;
}

/** The first sentence of the schema's description of `name`, without the proto's "REQUIRED." note. */
function propertyDescription(parentSchema: unknown, name: string): string | undefined {
  const props = isObject(parentSchema) ? parentSchema.properties : undefined;
  const prop = isObject(props) ? props[name] : undefined;
  const text = isObject(prop) && typeof prop.description === 'string' ? prop.description : '';
  const first = /^[^\n]*?[.](?=\s|$)/.exec(text)?.[0] ?? text.split('\n')[0]!;
  const sentence = first.replace(/\s*REQUIRED\.?\s*$/, '').replace(/\.$/, '').trim();
  return sentence === '' || sentence.length > 160 ? undefined : sentence;
}

/** A hint for `e`, or undefined when nothing useful can be said beyond the message. */
export function genericHint(e: ErrorObject): string | undefined {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'type':
      return typeHint(String(p.type), e.data);
    case 'enum': {
      const allowed = Array.isArray(p.allowedValues) ? p.allowedValues : [];
      const meant = sameButCase(e.data, allowed);
      return meant !== undefined ? `Did you mean ${quote(meant)}? The values are case-sensitive.` : 'Use one of the listed values, exactly as written.';
    }
    case 'const': {
      const meant = sameButCase(e.data, [p.allowedValue]);
      return meant !== undefined ? `Did you mean ${quote(meant)}? The value is case-sensitive.` : `Write ${quote(p.allowedValue)}.`;
    }
    case 'required': {
      const what = propertyDescription(e.parentSchema, String(p.missingProperty));
      return `Add ${quote(p.missingProperty)}${what ? ` (${what})` : ''}.`;
    }
    case 'minLength':
      return 'Give it a value; an empty string says nothing.';
    case 'minItems':
      return p.limit === 1 ? 'List at least one item.' : `List at least ${String(p.limit)} items.`;
    case 'format':
      return p.format === 'uri' || p.format === 'uri-reference' ? 'Use an absolute URI such as "https://example.org/…".' : undefined;
    case 'not':
    case 'false schema':
      return 'Remove it.';
    case 'additionalProperties':
      return 'Remove it, or check its spelling.';
    case 'uniqueItems':
      return 'Remove the duplicate.';
    default:
      return undefined;
  }
}
