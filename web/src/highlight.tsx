/**
 * Marks the words of a search in the text of a result. The registry matches without regard to
 * case or accents and by word forms (prefixes, stems), so the page compares folded words and
 * accepts a shared stem, not only exact spellings.
 */
import type { ComponentChildren } from 'preact';

const WORD = /[\p{L}\p{N}]+/gu;
/** Query syntax that is not a word to find: operators and field prefixes (relevance's query syntax). */
const OPERATORS = new Set(['or', 'and', 'not']);

export const fold = (s: string): string => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/** The words of a query worth marking: no operators, no excluded (-word) terms, no field names. */
export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const raw of query.split(/\s+/)) {
    if (!raw || raw.startsWith('-')) continue;
    const word = raw.includes(':') ? raw.slice(raw.indexOf(':') + 1) : raw;
    for (const m of word.matchAll(WORD)) {
      const t = fold(m[0]);
      if (t.length >= 2 && !OPERATORS.has(t)) terms.add(t);
    }
  }
  return [...terms];
}

function sharedPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** A word of the text matches a term when it starts with it, or both share a stem ("translating" ~ "translate"). */
export function wordMatches(word: string, terms: readonly string[]): boolean {
  const w = fold(word);
  return terms.some((t) => w.startsWith(t) || sharedPrefix(w, t) >= Math.min(t.length, Math.max(4, t.length - 3)));
}

export function Highlight({ text, terms }: { text: string; terms: readonly string[] }) {
  if (terms.length === 0 || !text) return <>{text}</>;
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const m of text.matchAll(WORD)) {
    if (!wordMatches(m[0], terms)) continue;
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(<mark>{m[0]}</mark>);
    last = m.index + m[0].length;
  }
  if (last === 0) return <>{text}</>;
  out.push(text.slice(last));
  return <>{out}</>;
}
