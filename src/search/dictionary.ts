/**
 * Interned strings → dense ids, each id counted by what references it (./attributes.ts: an entry
 * its owner and interface list, a skill its tags and modes), so that a value nothing references
 * any more is forgotten and its id used again. Without this every value ever registered stayed:
 * a card's tags are free text, and 1,000 cards of 110 skills with a tag of their own each,
 * registered and unregistered in turn, left 120 MiB (the tags' listing order, ./recency-lists.ts)
 * that never came back, and every saved index carried the values forward.
 *
 * A count that falls to 0 queues its id; `forgetUnused`, when the write is done, forgets those
 * still at 0 (so an update that keeps a value keeps its id, and a write pays for the values it
 * releases, never a pass over the corpus). Free ids are used again lowest first, and free ids at
 * the end are given back, so `bound` follows the most values held at once, not all there were
 * (a filter sizes by it, and a bit per mode id decides a mode filter only while it is small).
 */

export class Dictionary {
  private readonly ids = new Map<string, number>();
  /** By id: its value (undefined: a free id). */
  private readonly byId: (string | undefined)[] = [];
  /** By id: the references to it. */
  private counts = new Int32Array(16);
  /**
   * Free ids, a binary min-heap (lowest first). It may hold ids given back at the end since
   * (at or past `bound`: skipped when met); an id below `bound` is in it once, and only while free.
   */
  private readonly free: number[] = [];
  /** Ids whose count fell to 0 since `forgetUnused`. */
  private unused: number[] = [];

  /** The id of `value` (interned if it is new) with one reference more. */
  acquire(value: string): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.freeId();
      this.ids.set(value, id);
      this.byId[id] = value;
    }
    this.counts[id]!++;
    return id;
  }

  /** One reference to `id` more (a saved index's, counted as it loads). */
  retain(id: number): void {
    if (this.byId[id] === undefined) throw new Error('the saved index references an attribute value it does not have');
    this.counts[id]!++;
  }

  /** One reference to `id` fewer: at none left, `forgetUnused` forgets it (unless it is acquired again first). */
  release(id: number): void {
    if (--this.counts[id]! === 0) this.unused.push(id);
  }

  /**
   * Forgets the values left without references (call when a write is done), each told to
   * `onForget` (for what the caller keeps by id) before its id may be used again.
   */
  forgetUnused(onForget?: (id: number) => void): void {
    if (this.unused.length === 0) return;
    const ids = this.unused;
    this.unused = [];
    for (const id of ids) {
      const value = this.byId[id];
      // Acquired again, or queued twice (released, acquired, released) and forgotten already.
      if (this.counts[id] !== 0 || value === undefined) continue;
      this.ids.delete(value);
      this.byId[id] = undefined;
      onForget?.(id);
      this.pushFree(id);
    }
    while (this.byId.length > 0 && this.byId[this.byId.length - 1] === undefined) this.byId.length--;
  }

  find(value: string): number | undefined {
    return this.ids.get(value);
  }

  /** The value of `id` (undefined: a free id). */
  value(id: number): string | undefined {
    return this.byId[id];
  }

  /** Values known. */
  get size(): number {
    return this.ids.size;
  }

  /** Every id is below this. */
  get bound(): number {
    return this.byId.length;
  }

  /** The values by id, undefined for a free one (a copy, for a saved index). */
  saved(): (string | undefined)[] {
    return [...this.byId];
  }

  /**
   * Takes over saved values (into an empty dictionary), with no references yet: the caller
   * `retain`s what its saved parts reference, then `forgetUnused` forgets the rest (values an
   * index saved before values were forgotten still has).
   */
  load(values: readonly (string | undefined)[]): void {
    this.counts = new Int32Array(Math.max(16, values.length));
    values.forEach((value, id) => {
      this.byId[id] = value;
      if (value === undefined) {
        this.pushFree(id);
        return;
      }
      if (this.ids.has(value)) throw new Error('the saved index has an attribute value twice');
      this.ids.set(value, id);
      this.unused.push(id);
    });
  }

  /** The lowest free id, or a new one at the end. */
  private freeId(): number {
    while (this.free.length > 0) {
      const id = this.popFree();
      if (id < this.byId.length && this.byId[id] === undefined) return id;
    }
    const id = this.byId.length;
    if (id >= this.counts.length) {
      const grown = new Int32Array(this.counts.length * 2);
      grown.set(this.counts);
      this.counts = grown;
    }
    this.counts[id] = 0;
    return id;
  }

  private pushFree(id: number): void {
    const heap = this.free;
    let i = heap.length;
    heap.push(id);
    while (i > 0) {
      const parent = (i - 1) >>> 1;
      if (heap[parent]! <= id) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = id;
  }

  private popFree(): number {
    const heap = this.free;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length === 0) return top;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && heap[child + 1]! < heap[child]!) child++;
      if (heap[child]! >= last) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
