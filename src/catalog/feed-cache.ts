/**
 * Answers derived from storage, kept until the change feed moves: a catalog page is rebuilt
 * only after something was registered, updated or removed (here or, with PostgreSQL, on another
 * replica: the follower publishes those on the same feed), not on every request.
 *
 * - Concurrent requests for the same key share one build (a crawler burst after a change costs
 *   one storage read). A shared build that fails is not shared further: each waiter whose build
 *   was someone else's builds for itself (a rate limit or a refusal belongs to its caller).
 * - A value built while a change was published is served to its waiters but not kept.
 * - Bounded by total size: the least recently built keys go first.
 */
export interface FeedPosition {
  /** Grows with every published change. */
  readonly version: number;
}

interface Slot<T> {
  promise: Promise<T>;
  bytes: number;
}

export class FeedCache<T> {
  private seen = -1;
  private readonly slots = new Map<string, Slot<T>>();
  private bytes = 0;

  constructor(
    private readonly feed: FeedPosition,
    private readonly sizeOf: (value: T) => number,
    private readonly maxBytes: number,
  ) {}

  async getOrBuild(key: string, build: () => Promise<T>): Promise<T> {
    this.sync();
    const shared = this.slots.get(key);
    if (shared) {
      try {
        return await shared.promise;
      } catch {
        return build();
      }
    }
    const startedAt = this.feed.version;
    const slot: Slot<T> = { promise: build(), bytes: 0 };
    this.slots.set(key, slot);
    try {
      const value = await slot.promise;
      if (this.feed.version !== startedAt) this.drop(key, slot);
      else if (this.slots.get(key) === slot) {
        slot.bytes = this.sizeOf(value);
        this.bytes += slot.bytes;
        this.evict();
      }
      return value;
    } catch (err) {
      this.drop(key, slot);
      throw err;
    }
  }

  /** Keys held (for tests and metrics). */
  get size(): number {
    return this.slots.size;
  }

  private drop(key: string, slot: Slot<T>): void {
    if (this.slots.get(key) !== slot) return;
    this.slots.delete(key);
    this.bytes -= slot.bytes;
  }

  private evict(): void {
    for (const [key, slot] of this.slots) {
      if (this.bytes <= this.maxBytes) break;
      if (slot.bytes > 0) this.drop(key, slot);
    }
  }

  private sync(): void {
    if (this.feed.version !== this.seen) {
      this.slots.clear();
      this.bytes = 0;
      this.seen = this.feed.version;
    }
  }
}
