/**
 * Marks the words of a search in the text of a result. The page reads the query and the text by
 * the registry's own rules (src/search: its query parser and tokenizer), so what a search
 * matched is what is marked: words with their vowel signs (हिन्दी, Thai by dictionary), emoji,
 * C++ and C#, each Chinese or Japanese character, camelCase identifiers. The registry also
 * matches word forms (prefixes, stems), so a word is marked when it starts with a query word or
 * shares a stem with it, not only when spelt the same.
 */
import type { ComponentChildren } from 'preact';
import { MIN_PREFIX_LENGTH, parseQuery } from '../../src/search/query';
import { tokenize, wordSpans } from '../../src/search/text-encoder';

/** The words of a query worth marking (as the index folds them): no operators, no excluded (-word) terms, no field names. */
export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const clause of parseQuery(query).clauses) {
    for (const alt of clause.alternatives) {
      for (const word of alt.kind === 'word' ? [alt.word] : alt.words) terms.add(word);
    }
  }
  return [...terms];
}

function sharedPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/**
 * A word of the text (its terms) matches a query term when it starts with it, or both share a
 * stem ("translating" ~ "translate"). A term shorter than the index's shortest prefix ("R",
 * "IT") matches only itself, as in the index: else "R" marked every word starting with r.
 */
function termMatches(w: string, terms: readonly string[]): boolean {
  return terms.some((t) => (t.length < MIN_PREFIX_LENGTH ? w === t : w.startsWith(t) || sharedPrefix(w, t) >= Math.min(t.length, Math.max(4, t.length - 3))));
}

export function Highlight({ text, terms }: { text: string; terms: readonly string[] }) {
  if (terms.length === 0 || !text) return <>{text}</>;
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const [start, end] of wordSpans(text)) {
    const word = text.slice(start, end);
    if (!tokenize(word).some((w) => termMatches(w, terms))) continue;
    if (start > last) out.push(text.slice(last, start));
    out.push(<mark>{word}</mark>);
    last = end;
  }
  if (last === 0) return <>{text}</>;
  out.push(text.slice(last));
  return <>{out}</>;
}
