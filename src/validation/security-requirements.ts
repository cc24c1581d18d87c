/**
 * Security requirements must name schemes the card declares. The requirement object follows
 * OpenAPI's, whose rule is that "each name MUST correspond to a security scheme which is
 * declared"; JSON Schema cannot compare one member's keys with another's, so it is checked
 * here. A requirement naming an undeclared scheme leaves clients unable to authenticate: the
 * card says "use scheme X" and nothing tells them what X is.
 *
 * v1.0: card and skill `securityRequirements`, each entry {"schemes": {"<name>": {"list": [...]}}}.
 * v0.3: card and skill `security`, each entry {"<name>": ["<scope>", ...]}.
 * A v1.0 entry in the v0.3 form is an error too: it would silently mean "no credentials".
 */
import type { Finding } from '../contract/types.js';
import { isObject, pointer, quote, type JsonObject } from '../lib/json.js';
import type { Generation } from './types.js';

/** The requirement lists of a card of this generation, with their JSON Pointers. */
function requirementLists(card: JsonObject, generation: Generation): Array<{ path: string; list: unknown[] }> {
  const field = generation === '1.0' ? 'securityRequirements' : 'security';
  const out: Array<{ path: string; list: unknown[] }> = [];
  if (Array.isArray(card[field])) out.push({ path: pointer('', field), list: card[field] });
  const skills = Array.isArray(card.skills) ? card.skills : [];
  skills.forEach((skill, i) => {
    if (isObject(skill) && Array.isArray(skill[field])) out.push({ path: pointer('/skills', i, field), list: skill[field] });
  });
  return out;
}

/** The scheme names one requirement entry refers to, with the pointer of each reference. */
function referencedNames(entry: unknown, entryPath: string, generation: Generation): Array<{ name: string; path: string }> {
  if (!isObject(entry)) return [];
  const holder = generation === '1.0' ? entry.schemes : entry;
  const holderPath = generation === '1.0' ? pointer(entryPath, 'schemes') : entryPath;
  if (!isObject(holder)) return [];
  return Object.keys(holder).map((name) => ({ name, path: pointer(holderPath, name) }));
}

function undeclaredHint(name: string, declared: string[], generation: Generation): string {
  const example = generation === '1.0' ? `{${quote(name)}: {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}` : `{${quote(name)}: {"type": "http", "scheme": "bearer"}}`;
  const declare = `declare it in "securitySchemes", e.g. "securitySchemes": ${example}`;
  if (declared.length === 0) return `The card declares no security schemes: ${declare}.`;
  return `Use a declared scheme (${declared.map((d) => quote(d)).join(', ')}) or ${declare}.`;
}

/**
 * A v1.0 entry written the v0.3 way, {"bearer": []}: it has no "schemes", so v1.0 readers (the
 * proto's JSON mapping drops unknown members) see an empty requirement, which means "no
 * credentials needed". The schema allows unknown members, so it would pass unnoticed.
 */
function v03FormEntry(entry: unknown, entryPath: string): Finding | undefined {
  if (!isObject(entry) || 'schemes' in entry) return undefined;
  const names = Object.keys(entry);
  if (names.length === 0) return undefined;
  const scopes = (v: unknown): string => {
    const text = Array.isArray(v) ? JSON.stringify(v) : '[]';
    return text.length > 80 ? '[…]' : text;
  };
  const rewritten = names.map((n) => `${quote(n)}: {"list": ${scopes(entry[n])}}`).join(', ');
  return {
    path: entryPath,
    rule: 'v03-security-requirement',
    message: `the requirement names ${names.map((n) => quote(n)).join(', ')} without "schemes" (the v0.3 form); v1.0 clients read it as "no credentials needed"`,
    hint: `Write it as {"schemes": {${rewritten}}}.`,
  };
}

/** Errors for every reference to a scheme that `securitySchemes` does not declare. */
export function securityReferenceErrors(card: JsonObject, generation: Generation): Finding[] {
  const declared = isObject(card.securitySchemes) ? Object.keys(card.securitySchemes) : [];
  const known = new Set(declared);
  const out: Finding[] = [];
  for (const { path, list } of requirementLists(card, generation)) {
    list.forEach((entry, i) => {
      const misshapen = generation === '1.0' ? v03FormEntry(entry, pointer(path, i)) : undefined;
      if (misshapen) out.push(misshapen);
      for (const ref of referencedNames(entry, pointer(path, i), generation)) {
        if (known.has(ref.name)) continue;
        out.push({
          path: ref.path,
          rule: 'undeclared-security-scheme',
          message: `security scheme ${quote(ref.name)} is not declared in "securitySchemes"`,
          hint: undeclaredHint(ref.name, declared, generation),
        });
      }
    });
  }
  return out;
}
