/**
 * The text-matching layer: one FlexSearch `Index` holding term → unit postings.
 *
 * - One FlexSearch document per *unit* (an entry's own text, one skill, one tool); its content
 *   is the unit's distinct terms, already normalised by ./text-encoder.ts (FlexSearch's encoder
 *   is a plain space split, so index and query agree exactly).
 * - FlexSearch files every posting in a "resolution slot", normally the term's position. Here a
 *   custom `score` puts it in the slot given by the caller: the bit mask of the fields the term
 *   occurs in (./fields.ts). A lookup therefore says, per unit, *where* the term matched, and
 *   no second per-field index is needed. Slots are not capped by `resolution` on single-term
 *   lookups, the only kind made here.
 * - `tokenize: "strict"`: whole terms only; prefixes are expanded through ./vocabulary.ts
 *   instead of FlexSearch's "forward" tokenizer, which files every prefix and costs several
 *   times the memory.
 * - `fastupdate: true`: FlexSearch keeps, per unit, references to the posting arrays holding it,
 *   so `remove` touches only those arrays. Without it a removal scans the whole index (tens of
 *   milliseconds per unit at 100,000 entries); sharding the index by entry to bound that scan was
 *   tried and measured slower to query (every term looked up in every shard, and many small
 *   posting arrays scattered over the heap).
 * - Lookups use `resolve: false`, which hands back FlexSearch's slot arrays without copying.
 *   Callers must treat them as read-only and drop them before the next change.
 *
 * One `Document` with several fields and tags is deliberately not used (see NOTES.md: it drops
 * matches when a tag filter is combined with several fields); filters live in ./filters.ts.
 */
import { Index, type Id } from 'flexsearch';

/** Per-slot posting lists of one term; index = slot (field mask), with holes. */
export type SlotLists = readonly (readonly Id[] | undefined)[];

export class TermIndex {
  /** The slots of the document being added, by term position (read by the score callback). */
  private pendingSlots: readonly number[] = [];
  private readonly index = new Index({
    tokenize: 'strict',
    resolution: 64,
    fastupdate: true,
    cache: false,
    encode: (text: string) => text.split(' '),
    score: (_content: string[], _term: string, termIndex: number): number => this.pendingSlots[termIndex] ?? 0,
  });

  /** Indexes unit `uid`: distinct `terms`, each filed under slot `slots[i]`. */
  add(uid: number, terms: readonly string[], slots: readonly number[]): void {
    if (terms.length === 0) return;
    this.pendingSlots = slots;
    try {
      this.index.add(uid, terms.join(' '));
    } finally {
      this.pendingSlots = [];
    }
  }

  remove(uid: number): void {
    this.index.remove(uid);
  }

  /** The slot lists of `term` (empty when unknown). `term` must be normalised (no spaces). */
  lookup(term: string): SlotLists {
    return this.index.search(term, { resolve: false }).result;
  }

  /** Drops the empty posting arrays and terms that removals leave behind (fastupdate). */
  cleanup(): void {
    this.index.cleanup();
  }

  /** Whether any unit still has `term`. */
  has(term: string): boolean {
    for (const ids of this.lookup(term)) if (ids && ids.length) return true;
    return false;
  }
}
