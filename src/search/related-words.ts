/**
 * Query expansion: other words for what a query word means. Sources implement RelatedWords;
 * the index asks them at query time only (nothing is added to postings), and weighs what they
 * give below the query's own words (./expansion.ts).
 *
 * Sources: WordNet (./wordnet.ts: synonym sets and direct hypernyms of English words) and the
 * operator's synonym file (./synonyms.ts, REGISTRY_SYNONYMS).
 */

/** A related term: normalised words (more than one: matched as a phrase) and a weight in (0, 1]. */
export interface RelatedTerm {
  readonly words: readonly string[];
  /** Relative to an exact match of the query word (1). */
  readonly weight: number;
  /** Whether a match counts as a full match of the query word in the ranking (operator synonyms do). */
  readonly strong: boolean;
}

export interface RelatedWords {
  /** Terms related to a normalised query word (./text-encoder.ts), best first. */
  related(word: string): readonly RelatedTerm[];
}

/** Several sources as one: the first source's terms first, duplicates dropped (the first kept). */
export function combineRelatedWords(sources: readonly (RelatedWords | undefined)[]): RelatedWords | undefined {
  const list = sources.filter((s): s is RelatedWords => s !== undefined);
  if (list.length === 0) return undefined;
  if (list.length === 1) return list[0];
  return {
    related(word: string): readonly RelatedTerm[] {
      const seen = new Set<string>();
      const out: RelatedTerm[] = [];
      for (const source of list) {
        for (const t of source.related(word)) {
          const key = t.words.join(' ');
          if (seen.has(key)) continue;
          seen.add(key);
          out.push(t);
        }
      }
      return out;
    },
  };
}

/** A bounded memo for per-word answers (cleared whole when full: queries repeat words a lot). */
export class WordMemo<T> {
  private readonly map = new Map<string, T>();
  constructor(private readonly capacity = 4096) {}
  get(key: string, compute: (key: string) => T): T {
    const hit = this.map.get(key);
    if (hit !== undefined) return hit;
    const value = compute(key);
    if (this.map.size >= this.capacity) this.map.clear();
    this.map.set(key, value);
    return value;
  }
  delete(key: string): void {
    this.map.delete(key);
  }
}
