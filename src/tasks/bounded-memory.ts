/**
 * Tasks held in memory, bounded three ways: at most `maxTasks`, at most about `maxBytes`, and
 * each for at most `ttlMs` after its last save. Whatever goes over a bound goes, oldest save
 * first, so a flood of requests can cost this process a fixed amount of memory and nothing
 * more. (A Map keeps insertion order: a save moves the task to the end, so the head is always
 * the task saved longest ago, which is also the first to expire.) With `byOwner`, what goes over
 * a bound is the oldest task of the owner holding the most (tasks over the count, bytes over the
 * bytes): one principal's flood of reads pushes out its own tasks, not everyone's before their
 * time to live (as durable tasks keep an equal share per principal).
 *
 * Bytes are the memory a task holds as V8 lays it out (src/lib/memory-size.ts), not its JSON's
 * length: a search's task holds about three times its JSON's length. A value tasks share (a kept
 * search answer, src/lib/shared-json.ts, with the JSON made of it) is counted once, while any
 * task here holds it, however many do.
 */
import type { Task } from '@a2a-js/sdk';
import { memoryBytes } from '../lib/memory-size.js';
import { isSharedJson, sharedMemoryBytes } from '../lib/shared-json.js';
import type { TaskRow } from '../storage/types.js';

export interface MemoryLimits {
  maxTasks: number;
  maxBytes: number;
  ttlMs: number;
  /**
   * Over a bound, the owner holding the most loses its oldest task first (else the oldest of all
   * goes). For memories of few owners (principals): choosing costs a look at each owner.
   */
  byOwner?: boolean;
}

/** What one owner (tenant and owner) holds: its tasks, their bytes, and the shared values it counts once. */
interface OwnerShare {
  tasks: number;
  bytes: number;
  shared: Map<object, number>;
}

/**
 * The task as saved: a private copy (callers get clones), or for a finished task that is also in
 * the database, its row as stored (flat strings: nothing for the garbage collector to walk, and
 * the parsed request the task's history shares is not kept alive with it).
 */
export type HeldForm = { task: Task; row?: undefined } | { task?: undefined; row: TaskRow };

/**
 * What a held task costs: `bytes` of its own, and the values it shares with other tasks (each
 * counted once by the memory that holds them, sharedMemoryBytes).
 */
export interface Footprint {
  bytes: number;
  shared?: readonly object[];
}

export type HeldTask = HeldForm &
  Footprint & {
    tenant: string;
    owner: string;
    id: string;
    /** Status timestamp in epoch ms: the listing order. */
    updated: number;
    /** The task is also in the database (this is a cached copy). */
    durable: boolean;
    expiresAt: number;
  };

/** What `put` takes: a held task without its expiry. */
export type HeldEntry = HeldForm & Omit<HeldTask, 'expiresAt' | 'task' | 'row'>;

/** A task's place here beyond the task: its record (HeldTask), its key and its entries in the two maps. */
const PLACE_BYTES = 256;

const keyOf = (tenant: string, owner: string, id: string) => `${tenant}\u0000${owner}\u0000${id}`;
const scopeKeyOf = (tenant: string, owner: string) => `${tenant}\u0000${owner}`;

export class BoundedTaskMemory {
  readonly #tasks = new Map<string, HeldTask>();
  /** tenant+owner -> keys of that scope's tasks (oldest save first), for ListTasks. */
  readonly #byScope = new Map<string, Set<string>>();
  /** tenant+owner -> what it holds (`byOwner` only). */
  readonly #shares = new Map<string, OwnerShare>();
  /** The shared values held tasks carry: how many of them do, and the bytes counted for it once. */
  readonly #shared = new Map<object, { holders: number; bytes: number }>();
  #bytes = 0;

  /**
   * `now`: milliseconds on a clock that only goes forward. A task's time to live is a duration,
   * counted on the monotonic clock: on the wall clock, a step forward (NTP) expired every task
   * at once (a caller's GetTask of the search it had just made answered "not found"), and a step
   * back kept them all as much longer.
   */
  constructor(
    private readonly limits: MemoryLimits,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.#tasks.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get(tenant: string, owner: string, id: string): HeldTask | undefined {
    const key = keyOf(tenant, owner, id);
    const held = this.#tasks.get(key);
    if (held && held.expiresAt <= this.now()) {
      this.#delete(key, held);
      return undefined;
    }
    return held;
  }

  /** Adds or replaces the task, then evicts what is over the bounds (oldest save first). */
  put(entry: HeldEntry): void {
    const key = keyOf(entry.tenant, entry.owner, entry.id);
    const previous = this.#tasks.get(key);
    if (previous) this.#delete(key, previous);
    const now = this.now();
    const held = { ...entry, expiresAt: now + this.limits.ttlMs } as HeldTask;
    this.#tasks.set(key, held);
    this.#bytes += PLACE_BYTES + held.bytes;
    const scopeKey = scopeKeyOf(held.tenant, held.owner);
    let share: OwnerShare | undefined;
    if (this.limits.byOwner) {
      share = this.#shares.get(scopeKey);
      if (!share) this.#shares.set(scopeKey, (share = { tasks: 0, bytes: 0, shared: new Map() }));
      share.tasks++;
      share.bytes += PLACE_BYTES + held.bytes;
    }
    for (const value of held.shared ?? []) {
      let counted = this.#shared.get(value);
      if (counted) counted.holders++;
      else {
        counted = { holders: 1, bytes: sharedMemoryBytes(value) };
        this.#shared.set(value, counted);
        this.#bytes += counted.bytes;
      }
      if (!share) continue;
      const holders = share.shared.get(value) ?? 0;
      if (holders === 0) share.bytes += counted.bytes;
      share.shared.set(value, holders + 1);
    }
    let scope = this.#byScope.get(scopeKey);
    if (!scope) this.#byScope.set(scopeKey, (scope = new Set()));
    scope.add(key);
    // Passed over by eviction only when it fits alone: one larger than the bound goes first, not
    // after every other owner's tasks.
    this.#evict(now, PLACE_BYTES + held.bytes <= this.limits.maxBytes ? key : undefined);
  }

  /** Forgets the task, if held. */
  remove(tenant: string, owner: string, id: string): void {
    const key = keyOf(tenant, owner, id);
    const held = this.#tasks.get(key);
    if (held) this.#delete(key, held);
  }

  /** The scope's tasks that have not expired. */
  scope(tenant: string, owner: string): HeldTask[] {
    const keys = this.#byScope.get(scopeKeyOf(tenant, owner));
    if (!keys) return [];
    const now = this.now();
    const found: HeldTask[] = [];
    for (const key of [...keys]) {
      const held = this.#tasks.get(key)!;
      if (held.expiresAt <= now) this.#delete(key, held);
      else found.push(held);
    }
    return found;
  }

  /** Every task held that has not expired, oldest save first. */
  all(): HeldTask[] {
    const now = this.now();
    return [...this.#tasks.values()].filter((held) => held.expiresAt > now);
  }

  /** Drops expired tasks now (a timer calls it, so an idle process gives the memory back too). */
  sweep(): void {
    this.#evict(this.now());
  }

  /** `fresh`: the task just saved, whose id its caller is about to be given (see below). */
  #evict(now: number, fresh?: string): void {
    for (const [key, held] of this.#tasks) {
      const over = this.#tasks.size > this.limits.maxTasks || this.#bytes > this.limits.maxBytes;
      if (!over && held.expiresAt > now) return;
      // Expired, or over a bound and the oldest of all is what goes.
      if (held.expiresAt <= now || !this.limits.byOwner) {
        this.#delete(key, held);
        continue;
      }
      // Over a bound: the oldest task of the owner holding the most goes, until under both.
      while (this.#tasks.size > this.limits.maxTasks || this.#bytes > this.limits.maxBytes) {
        const byCount = this.#tasks.size > this.limits.maxTasks;
        let most: string | undefined;
        let mostHeld = -1;
        let mostOldest = Infinity;
        for (const [scopeKey, share] of this.#shares) {
          const oldestKey = this.#byScope.get(scopeKey)!.values().next().value!;
          // An owner whose one task is the one just saved is not pushed out by its own saving
          // while another's task can go: its caller would get an id GetTask cannot find, though
          // it fits (a large search of a caller holding one task, beside another's many small ones).
          if (oldestKey === fresh) continue;
          const amount = byCount ? share.tasks : share.bytes;
          // Of two holding as much, the one whose oldest task is older.
          const oldest = this.#tasks.get(oldestKey)!.expiresAt;
          if (amount > mostHeld || (amount === mostHeld && oldest < mostOldest)) [most, mostHeld, mostOldest] = [scopeKey, amount, oldest];
        }
        // None other left: the task just saved is over the bound alone, and goes.
        const victim = most === undefined ? this.#tasks.keys().next().value! : this.#byScope.get(most)!.values().next().value!;
        this.#delete(victim, this.#tasks.get(victim)!);
      }
      return;
    }
  }

  #delete(key: string, held: HeldTask): void {
    this.#tasks.delete(key);
    this.#bytes -= PLACE_BYTES + held.bytes;
    const scopeKey = scopeKeyOf(held.tenant, held.owner);
    const share = this.#shares.get(scopeKey);
    if (share) {
      share.tasks--;
      share.bytes -= PLACE_BYTES + held.bytes;
      if (share.tasks === 0) this.#shares.delete(scopeKey);
    }
    for (const value of held.shared ?? []) {
      const counted = this.#shared.get(value)!;
      if (share && share.tasks > 0) {
        const holders = share.shared.get(value)! - 1;
        if (holders > 0) share.shared.set(value, holders);
        else {
          share.shared.delete(value);
          share.bytes -= counted.bytes;
        }
      }
      if (--counted.holders > 0) continue;
      this.#shared.delete(value);
      this.#bytes -= counted.bytes;
    }
    const scope = this.#byScope.get(scopeKey);
    scope?.delete(key);
    if (scope?.size === 0) this.#byScope.delete(scopeKey);
  }
}

/** About how many bytes a task row takes: flat strings, nothing shared. */
export function rowBytes(row: TaskRow): number {
  return memoryBytes(row);
}

/**
 * What a task (or any value held with it) costs in memory: one walk (memory-size.ts), which
 * leaves the values it shares with other tasks (a kept search answer) to be counted once.
 */
export function footprintOf(value: unknown): Footprint {
  let shared: object[] | undefined;
  const bytes = memoryBytes(value, (v) => {
    if (!Object.isFrozen(v) || !isSharedJson(v)) return false;
    (shared ??= []).push(v);
    return true;
  });
  return shared ? { bytes, shared } : { bytes };
}
