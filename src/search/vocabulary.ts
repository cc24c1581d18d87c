/**
 * Every term the index has seen, for prefix expansion of the last query word ("transl" →
 * translate, translation, ...) without FlexSearch's "forward" tokenizer, which files every
 * prefix of every term and costs several times the memory.
 *
 * Terms are kept in a sorted array (binary search for the prefix range) plus a pending list of
 * new terms merged on the next expansion. Removing an entry does not say which terms vanished,
 * so terms may outlive their last posting: harmless for matching (their lookup is empty), and
 * `sweep` drops them when the caller decides enough churn has happened.
 */
export class Vocabulary {
  private readonly terms = new Set<string>();
  private sorted: string[] = [];
  private pending: string[] = [];

  add(term: string): void {
    if (this.terms.has(term)) return;
    this.terms.add(term);
    this.pending.push(term);
  }

  has(term: string): boolean {
    return this.terms.has(term);
  }

  get size(): number {
    return this.terms.size;
  }

  /**
   * Up to `max` terms that start with `prefix` (longer than it), shortest first, then in
   * alphabetical order; at most `scanLimit` terms of the range are looked at.
   */
  expand(prefix: string, max: number, scanLimit = 256): string[] {
    if (max <= 0 || !prefix) return [];
    this.merge();
    const list = this.sorted;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    const found: string[] = [];
    for (let i = lo; i < list.length && found.length < scanLimit; i++) {
      const t = list[i]!;
      if (!t.startsWith(prefix)) break;
      if (t.length > prefix.length) found.push(t);
    }
    if (found.length > max) {
      found.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
      found.length = max;
    }
    return found;
  }

  /** Drops every term for which `alive` says no. */
  sweep(alive: (term: string) => boolean): void {
    this.merge();
    this.sorted = this.sorted.filter((t) => {
      if (alive(t)) return true;
      this.terms.delete(t);
      return false;
    });
  }

  private merge(): void {
    if (this.pending.length === 0) return;
    const pending = this.pending;
    this.pending = [];
    if (pending.length > 64) {
      this.sorted = this.sorted.concat(pending).sort();
      return;
    }
    for (const t of pending) {
      let lo = 0;
      let hi = this.sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.sorted[mid]! < t) lo = mid + 1;
        else hi = mid;
      }
      this.sorted.splice(lo, 0, t);
    }
  }
}
