/**
 * Tasks held in memory, bounded three ways: at most `maxTasks`, at most about `maxBytes`, and
 * each for at most `ttlMs` after its last save. Whatever goes over a bound goes, oldest save
 * first, so a flood of requests can cost this process a fixed amount of memory and nothing
 * more. (A Map keeps insertion order: a save moves the task to the end, so the head is always
 * the task saved longest ago, which is also the first to expire.)
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
  /** tenant+owner -> keys of that scope's tasks, for ListTasks. */
  readonly #byScope = new Map<string, Set<string>>();
  /** The shared values held tasks carry: how many of them do, and the bytes counted for it once. */
  readonly #shared = new Map<object, { holders: number; bytes: number }>();
  #bytes = 0;

  constructor(
    private readonly limits: MemoryLimits,
    private readonly now: () => number = Date.now,
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
    for (const value of held.shared ?? []) {
      const counted = this.#shared.get(value);
      if (counted) counted.holders++;
      else {
        const bytes = sharedMemoryBytes(value);
        this.#shared.set(value, { holders: 1, bytes });
        this.#bytes += bytes;
      }
    }
    const scopeKey = scopeKeyOf(held.tenant, held.owner);
    let scope = this.#byScope.get(scopeKey);
    if (!scope) this.#byScope.set(scopeKey, (scope = new Set()));
    scope.add(key);
    this.#evict(now);
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

  #evict(now: number): void {
    for (const [key, held] of this.#tasks) {
      const over = this.#tasks.size > this.limits.maxTasks || this.#bytes > this.limits.maxBytes;
      if (!over && held.expiresAt > now) return;
      this.#delete(key, held);
    }
  }

  #delete(key: string, held: HeldTask): void {
    this.#tasks.delete(key);
    this.#bytes -= PLACE_BYTES + held.bytes;
    for (const value of held.shared ?? []) {
      const counted = this.#shared.get(value)!;
      if (--counted.holders > 0) continue;
      this.#shared.delete(value);
      this.#bytes -= counted.bytes;
    }
    const scopeKey = scopeKeyOf(held.tenant, held.owner);
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
