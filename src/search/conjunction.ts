/**
 * The entries that have most of a text search's words (at entry level), found before the search
 * reads its postings one by one, and the bound that makes reading only theirs rank-safe.
 *
 * Why: an entry's relevance key counts the query's clauses it matches (1 each, 0.5 for a clause
 * matched only by weak variants) before any score, and a search reads at most `maxPostings`
 * postings, each a random read of per-entry tables (about 0.3 µs at 1,000,000 entries). Two or
 * three common words at 1,000,000 entries have 150,000 to 1,000,000 postings, so the budget ran
 * out in the rarest word's list: the page came from the newest entries having that word, and the
 * other words were not read at all. The entries having every word (or all but one) are usually
 * a few thousand; finding them costs a sequential pass over the postings setting bits, a bit per
 * entry and clause (in cache: 125 KB a bitmap at 1,000,000 entries), about 1 ns a posting. When
 * at least a page of them reach a key no other entry can reach (`nonMemberBound`), the page is
 * decided among them, exactly as a full read ranks them.
 */
import { bitmapOf, bitmapWords } from './entry-bits.js';
import { ANY_LANGUAGE } from './expansion.js';
import { popcount } from './ranking.js';
import { M_LANG_MASK } from './tables.js';

/** What the conjunction reads of a posting group (see PostingsIndex). */
export interface ClauseGroup {
  readonly clause: number;
  /** Counts as a full match of the clause (not a typo or a related word). */
  readonly strong: boolean;
  readonly ids: ArrayLike<number>;
  /** The group's contribution to a unit's score. */
  readonly add: number;
  /** The language an entry must have for the group's postings to count, or ANY_LANGUAGE. */
  readonly lang: number;
}

/** Queries with more clauses having strong groups than this are not counted (a bitmap each). */
export const MAX_COUNTED_CLAUSES = 8;

/**
 * Per entry number, how many clauses it has a strong posting of, as bitmaps: `atLeast[k]` holds
 * the entries with k clauses or more (bit-sliced counting: a clause's own bits, then one pass of
 * word-wide ANDs and ORs per count).
 */
export class Conjunction {
  private readonly atLeast: Int32Array[] = [];
  private clause = new Int32Array(0);
  /** Bitmaps and words that may hold set bits (cleared by `clear`). */
  private usedMaps = 0;
  private usedWords = 0;
  private chosen = 0;
  /** The postings `narrow` keeps, group after group. */
  private kept = new Int32Array(0);

  /** The entries of the last `collect`'s answer (all clear after `clear`). */
  get members(): Int32Array {
    return this.atLeast[this.chosen]!;
  }

  /**
   * Counts, per entry (postings' ids >>> `ordBits`, below `entryBound`), the clauses it has a
   * strong posting of; `groups` must come clause by clause. Returns the largest m ≥ 2 such that
   * at least `rank` entries have m clauses or more (`members` then holds them; counted among the
   * entries set in `allowed` when given: those the filter may pass), or 0 (none, fewer
   * than two clauses with strong groups, or more than MAX_COUNTED_CLAUSES). Clauses matched only
   * by weak variants are not counted, nor postings of a word form in another language than the
   * entry's (by `marks`, ./tables.ts). Call `clear` once done with the bits.
   */
  collect(groups: readonly ClauseGroup[], marks: Uint8Array, entryBound: number, ordBits: number, rank: number, allowed?: Int32Array): number {
    const blocks: [number, number][] = [];
    for (let i = 0; i < groups.length; ) {
      const clause = groups[i]!.clause;
      let end = i;
      let strong = false;
      for (; end < groups.length && groups[end]!.clause === clause; end++) if (groups[end]!.strong && groups[end]!.ids.length > 0) strong = true;
      if (strong) blocks.push([i, end]);
      i = end;
    }
    const clauses = blocks.length;
    if (clauses < 2 || clauses > MAX_COUNTED_CLAUSES) return 0;
    const words = bitmapWords(entryBound);
    if (this.clause.length < words) {
      this.clause = bitmapOf(this.clause, words);
      this.atLeast.length = 0;
    }
    while (this.atLeast.length <= clauses) this.atLeast.push(new Int32Array(this.clause.length));
    this.usedMaps = clauses + 1;
    this.usedWords = words;
    const own = this.clause;
    for (let b = 0; b < clauses; b++) {
      // An entry with two clauses or more has one of those before the last (the commonest,
      // whose postings are most of the pass): when fewer than `rank` entries (that `allowed`
      // allows) have any of them, the answer is 0 without reading the last clause.
      if (b === clauses - 1 && !atLeastCount(this.atLeast[1]!, words, rank, allowed)) return 0;
      // The first clause's bits go straight to atLeast[1]; the others' to `own`, then counted.
      const bits = b === 0 ? this.atLeast[1]! : own;
      if (b > 0) own.fill(0, 0, words);
      const [from, to] = blocks[b]!;
      for (let g = from; g < to; g++) {
        const group = groups[g]!;
        if (!group.strong) continue;
        const ids = group.ids;
        const lang = group.lang;
        if (lang === ANY_LANGUAGE) {
          for (let k = 0; k < ids.length; k++) {
            const e = ids[k]! >>> ordBits;
            bits[e >>> 5]! |= 1 << (e & 31);
          }
        } else {
          // Branch-free, as in `narrow`: the language test is unpredictable.
          for (let k = 0; k < ids.length; k++) {
            const e = ids[k]! >>> ordBits;
            bits[e >>> 5]! |= ((marks[e]! & M_LANG_MASK) === lang ? 1 : 0) << (e & 31);
          }
        }
      }
      if (b === 0) continue;
      // Entries with k-1 clauses before this one and this one now have k.
      for (let k = Math.min(b + 1, clauses); k >= 2; k--) {
        const up = this.atLeast[k]!;
        const down = this.atLeast[k - 1]!;
        for (let w = 0; w < words; w++) up[w]! |= down[w]! & own[w]!;
      }
      const one = this.atLeast[1]!;
      for (let w = 0; w < words; w++) one[w]! |= own[w]!;
    }
    for (let m = clauses; m >= 2; m--) {
      if (atLeastCount(this.atLeast[m]!, words, rank, allowed)) {
        this.chosen = m;
        return m;
      }
    }
    return 0;
  }

  /**
   * The groups with only the postings of `members`' entries (and of `allowed`'s when given),
   * in their order: a tight pass over every posting, so the search's own loop, several times
   * costlier a posting, reads only these. Views into one scratch array, valid until the next call.
   */
  narrow<G extends ClauseGroup>(groups: readonly G[], ordBits: number, allowed?: Int32Array): G[] {
    let total = 0;
    for (const g of groups) total += g.ids.length;
    // (One more than the postings: a dropped last posting is written past the kept ones.)
    if (this.kept.length <= total) this.kept = new Int32Array(Math.max(1024, total + (total >>> 2) + 1));
    const kept = this.kept;
    const members = this.members;
    // One bitmap to read a posting, not two (the members' bits are not needed after this).
    if (allowed) for (let w = 0; w < this.usedWords; w++) members[w]! &= allowed[w]!;
    const ends: number[] = [];
    let at = 0;
    for (const g of groups) {
      const ids = g.ids;
      // Branch-free: whether a posting is kept is unpredictable, and a mispredicted branch a
      // posting cost more than always writing it and advancing by its bit.
      for (let k = 0; k < ids.length; k++) {
        const id = ids[k]!;
        const e = id >>> ordBits;
        kept[at] = id;
        at += (members[e >>> 5]! >>> (e & 31)) & 1;
      }
      ends.push(at);
    }
    return groups.map((g, i) => ({ ...g, ids: kept.subarray(i === 0 ? 0 : ends[i - 1]!, ends[i]!) }));
  }

  clear(): void {
    for (let k = 1; k < this.usedMaps; k++) this.atLeast[k]!.fill(0, 0, this.usedWords);
    this.usedMaps = 0;
    this.chosen = 0;
  }
}

/** Whether `bits` (ANDed with `allowed` when given) has at least `count` bits set in its first `words` words; stops counting there. */
function atLeastCount(bits: Int32Array, words: number, count: number, allowed: Int32Array | undefined): boolean {
  let n = 0;
  if (allowed) {
    for (let w = 0; w < words; w++) {
      const x = bits[w]! & allowed[w]!;
      if (x !== 0 && (n += popcount(x)) >= count) return true;
    }
  } else {
    for (let w = 0; w < words; w++) if (bits[w] !== 0 && (n += popcount(bits[w]!)) >= count) return true;
  }
  return n >= count;
}

/**
 * The highest relevance key an entry can have that has a strong posting of fewer than `m` of
 * the clauses with strong groups (keys as PostingsIndex computes them per entry): at most m - 1
 * clauses count 1; each clause it lacks strongly counts `weakClause` at most if it has weak
 * variants, as does each clause with weak variants only; its best unit's score is at most every
 * clause's largest contribution, less, for the clauses it lacks strongly (the cheapest to lack),
 * what their strong variants add beyond their weak ones; times `norm`, the key's score scale.
 */
export function nonMemberBound(groups: readonly ClauseGroup[], clauseCount: number, norm: number, weakClause: number, m: number): number {
  const hasStrong = new Array<boolean>(clauseCount).fill(false);
  const hasWeak = new Array<boolean>(clauseCount).fill(false);
  const maxAdd = new Array<number>(clauseCount).fill(0);
  const maxWeakAdd = new Array<number>(clauseCount).fill(0);
  for (const g of groups) {
    if (g.ids.length === 0) continue;
    if (g.strong) hasStrong[g.clause] = true;
    else {
      hasWeak[g.clause] = true;
      maxWeakAdd[g.clause] = Math.max(maxWeakAdd[g.clause]!, g.add);
    }
    maxAdd[g.clause] = Math.max(maxAdd[g.clause]!, g.add);
  }
  let strongCapable = 0;
  let weakToo = 0;
  let weakOnly = 0;
  let score = 0;
  const losses: number[] = [];
  for (let c = 0; c < clauseCount; c++) {
    score += maxAdd[c]!;
    if (hasStrong[c]) {
      strongCapable++;
      if (hasWeak[c]) weakToo++;
      losses.push(maxAdd[c]! - maxWeakAdd[c]!);
    } else if (hasWeak[c]) weakOnly++;
  }
  const lacking = strongCapable - (m - 1);
  losses.sort((a, b) => a - b);
  for (let i = 0; i < lacking && i < losses.length; i++) score -= losses[i]!;
  return m - 1 + weakClause * (Math.min(lacking, weakToo) + weakOnly) + score * norm;
}
