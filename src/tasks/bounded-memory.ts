/**
 * Tasks held in memory, bounded three ways: at most `maxTasks`, at most about `maxBytes`, and
 * each for at most `ttlMs` after its last save. Whatever goes over a bound goes, oldest save
 * first, so a flood of requests can cost this process a fixed amount of memory and nothing
 * more. (A Map keeps insertion order: a save moves the task to the end, so the head is always
 * the task saved longest ago, which is also the first to expire.)
 */
import type { Task } from '@a2a-js/sdk';
import { sharedJsonBytes } from '../lib/shared-json.js';
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

export type HeldTask = HeldForm & {
  tenant: string;
  owner: string;
  id: string;
  /** Status timestamp in epoch ms: the listing order. */
  updated: number;
  /** The task is also in the database (this is a cached copy). */
  durable: boolean;
  bytes: number;
  expiresAt: number;
};

/** What `put` takes: a held task without its expiry. */
export type HeldEntry = HeldForm & Omit<HeldTask, 'expiresAt' | 'task' | 'row'>;

const keyOf = (tenant: string, owner: string, id: string) => `${tenant}\u0000${owner}\u0000${id}`;
const scopeKeyOf = (tenant: string, owner: string) => `${tenant}\u0000${owner}`;

export class BoundedTaskMemory {
  readonly #tasks = new Map<string, HeldTask>();
  /** tenant+owner -> keys of that scope's tasks, for ListTasks. */
  readonly #byScope = new Map<string, Set<string>>();
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
    this.#bytes += held.bytes;
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
    this.#bytes -= held.bytes;
    const scopeKey = scopeKeyOf(held.tenant, held.owner);
    const scope = this.#byScope.get(scopeKey);
    scope?.delete(key);
    if (scope?.size === 0) this.#byScope.delete(scopeKey);
  }
}

/** About how many bytes a task row takes: its strings' lengths and a little for the rest. */
export function rowBytes(row: TaskRow): number {
  let total = 64;
  for (const value of [row.tenant, row.owner, row.id, row.context_id, row.status_state, row.status, row.artifacts, row.history, row.metadata, row.protocol_version]) {
    total += (value?.length ?? 0) + 2;
  }
  return total;
}

/**
 * About how many bytes a value takes, counted like its JSON (strings by length, binary parts by
 * byte length). Cheap enough to run on every save: one walk, no serialisation.
 */
export function approximateBytes(value: unknown): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += v.length + 2;
    else if (typeof v === 'number' || typeof v === 'boolean') total += 8;
    else if (v !== null && typeof v === 'object') {
      // A value many answers share (a kept search answer, frozen) is counted by its JSON, made once.
      const shared = Object.isFrozen(v) ? sharedJsonBytes(v) : undefined;
      if (shared) {
        total += shared.length;
        continue;
      }
      if (ArrayBuffer.isView(v)) {
        total += v.byteLength;
        continue;
      }
      if (Array.isArray(v)) {
        total += 2 + v.length;
        for (let i = 0; i < v.length; i++) stack.push(v[i]);
        continue;
      }
      for (const key in v) {
        total += key.length + 4;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return total;
}
