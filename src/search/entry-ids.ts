/**
 * Entry ids by entry number, and entry numbers by id, kept compactly.
 *
 * The registry's entry ids are lowercase UUIDs (../lib/time-ordered-id.ts). Each was a string
 * (56 bytes on the heap) in an array by entry number plus a Map entry from id to number: about
 * 90-110 bytes an entry, and two million objects at 1,000,000 entries for every full garbage
 * collection to mark. Here a UUID is its 16 bytes in one array by entry number, found by an
 * open-addressing table of entry numbers keyed by a hash of those bytes: about 33 bytes an
 * entry (docs/scaling.md, "Memory"). The string is made again when asked for (a page's hits, a
 * listing's newest member); ties in the ranking and in a listing's order compare the bytes,
 * which order as the strings do.
 *
 * An id of any other shape (an index given its caller's own ids, an upper-case UUID) is kept
 * as its string, as before: the same answers, at the old cost.
 */
import { part, type IndexState } from './index-state.js';

const FREE = 0;
const UUID = 1;
const OTHER = 2;

/** Hex digit values by character code (-1: not a lowercase hex digit). */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let c = 0; c < 10; c++) HEX_VALUE[0x30 + c] = c;
for (let c = 0; c < 6; c++) HEX_VALUE[0x61 + c] = 10 + c;
/** Character codes of the lowercase hex digits, by value. */
const HEX_DIGIT = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** A UUID's text as it is written out (hyphens in place). */
const TEXT = Buffer.from('00000000-0000-0000-0000-000000000000', 'latin1');

/**
 * Writes the 16 bytes of `id` into `out` at `at` when it is a UUID written as the registry writes
 * them (36 characters, lowercase hex, hyphens at 8, 13, 18 and 23); false, writing nothing of
 * use, for any other id.
 */
function parseUuid(id: string, out: Uint8Array, at: number): boolean {
  if (id.length !== 36) return false;
  let b = at;
  for (let i = 0; i < 36; ) {
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (id.charCodeAt(i) !== 0x2d) return false;
      i++;
      continue;
    }
    const hi = id.charCodeAt(i);
    const lo = id.charCodeAt(i + 1);
    const h = hi < 128 ? HEX_VALUE[hi]! : -1;
    const l = lo < 128 ? HEX_VALUE[lo]! : -1;
    if (h < 0 || l < 0) return false;
    out[b++] = (h << 4) | l;
    i += 2;
  }
  return true;
}

/**
 * The 16 bytes at `at` as a UUID's text: one flat string. (Joined with `+`, it was a tree of
 * twenty pieces, some 600 bytes for as long as it is kept: a listing keeps its newest id.)
 */
function formatUuid(bytes: Uint8Array, at: number): string {
  for (let i = 0, c = 0; i < 16; i++, c += 2) {
    if (c === 8 || c === 13 || c === 18 || c === 23) c++;
    const b = bytes[at + i]!;
    TEXT[c] = HEX_DIGIT[b >>> 4]!;
    TEXT[c + 1] = HEX_DIGIT[b & 15]!;
  }
  return TEXT.toString('latin1');
}

/** A hash of the 16 bytes at `at` (all of them: ids a caller chose need not be random anywhere). */
function hashOf(bytes: Uint8Array, at: number): number {
  let h = 0x9e3779b9;
  for (let i = 0; i < 16; i += 4) {
    const word = bytes[at + i]! | (bytes[at + i + 1]! << 8) | (bytes[at + i + 2]! << 16) | (bytes[at + i + 3]! << 24);
    h = Math.imul(h ^ word, 0x85ebca6b);
    h ^= h >>> 13;
  }
  h = Math.imul(h ^ (h >>> 16), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class EntryIds {
  /** By entry number: FREE, UUID or OTHER. */
  #shapes = new Uint8Array(1024);
  /** By entry number, 16 bytes each: the UUID's bytes (shape UUID). */
  #bytes = new Uint8Array(0);
  /** Entry number + 1 of each UUID held, at the slot its hash leads to (linear probing); 0: empty. */
  #slots = new Int32Array(1024);
  #uuids = 0;
  /** Ids of any other shape, by entry number and the other way. */
  readonly #others: (string | undefined)[] = [];
  readonly #otherNumbers = new Map<string, number>();
  /** A UUID being looked up, parsed. */
  readonly #probe = new Uint8Array(16);

  /** How many ids are held. */
  get size(): number {
    return this.#uuids + this.#otherNumbers.size;
  }

  /** Whether entry number `no` holds an id. */
  has(no: number): boolean {
    return no < this.#shapes.length && this.#shapes[no] !== FREE;
  }

  /** The id of entry number `no`; undefined for a free number. */
  get(no: number): string | undefined {
    const shape = no < this.#shapes.length ? this.#shapes[no] : FREE;
    if (shape === UUID) return formatUuid(this.#bytes, no * 16);
    return shape === OTHER ? this.#others[no] : undefined;
  }

  /** The entry number holding `id`, or undefined. */
  numberOf(id: string): number | undefined {
    if (!parseUuid(id, this.#probe, 0)) return this.#otherNumbers.get(id);
    const slot = this.#find(this.#probe, 0);
    return slot < 0 ? undefined : this.#slots[slot]! - 1;
  }

  /** Entry number `no` (free) now holds `id` (held by no other number). */
  set(no: number, id: string): void {
    if (this.has(no)) throw new Error(`EntryIds: entry number ${no} already holds an id`);
    this.#reserve(no + 1);
    if (parseUuid(id, this.#probe, 0)) {
      this.#reserveBytes(no + 1);
      this.#bytes.set(this.#probe, no * 16);
      if (this.#find(this.#bytes, no * 16) >= 0) throw new Error(`EntryIds: ${id} is already held`);
      if ((this.#uuids + 1) * 2 > this.#slots.length) this.#rehash(this.#slots.length * 2);
      this.#place(no);
      this.#shapes[no] = UUID;
      this.#uuids++;
      return;
    }
    if (this.#otherNumbers.has(id)) throw new Error(`EntryIds: ${id} is already held`);
    this.#others[no] = id;
    this.#otherNumbers.set(id, no);
    this.#shapes[no] = OTHER;
  }

  /** Entry number `no` holds no id any more. */
  delete(no: number): void {
    const shape = no < this.#shapes.length ? this.#shapes[no] : FREE;
    if (shape === OTHER) {
      this.#otherNumbers.delete(this.#others[no]!);
      this.#others[no] = undefined;
    } else if (shape === UUID) {
      this.#remove(this.#find(this.#bytes, no * 16));
      this.#uuids--;
    }
    this.#shapes[no] = FREE;
  }

  /**
   * How the ids of entry numbers `a` and `b` order as strings (a free number's as ''): negative
   * when a's comes first, 0 when equal, positive otherwise. Two UUIDs compare by their bytes:
   * lowercase hex digits and hyphens in the same places order as the bytes do.
   */
  compare(a: number, b: number): number {
    const shapes = this.#shapes;
    // (A number whose shape is UUID has its bytes: they are reserved before it is set.)
    if (a < shapes.length && b < shapes.length && shapes[a] === UUID && shapes[b] === UUID) {
      const bytes = this.#bytes;
      for (let i = a * 16, j = b * 16, end = i + 16; i < end; i++, j++) {
        const d = bytes[i]! - bytes[j]!;
        if (d !== 0) return d;
      }
      return 0;
    }
    const ia = this.get(a) ?? '';
    const ib = this.get(b) ?? '';
    return ia < ib ? -1 : ia > ib ? 1 : 0;
  }

  /** Copies of what is held for entry numbers below `bound` (the index saves them). */
  save(state: IndexState, bound: number): void {
    this.#reserve(bound);
    if (this.#uuids > 0) this.#reserveBytes(bound);
    state.set('ids.shapes', this.#shapes.slice(0, bound));
    state.set('ids.bytes', this.#uuids > 0 ? this.#bytes.slice(0, bound * 16) : new Uint8Array(0));
    state.set('ids.others', [...this.#otherNumbers].map(([id, no]) => [no, id]));
  }

  /** Takes over what `save` wrote (into an empty set of ids). */
  load(state: IndexState): void {
    const shapes = part<Uint8Array>(state, 'ids.shapes');
    const bytes = part<Uint8Array>(state, 'ids.bytes');
    const others = part<[number, string][]>(state, 'ids.others');
    let uuids = 0;
    let otherCount = 0;
    for (let no = 0; no < shapes.length; no++) {
      if (shapes[no] === UUID) uuids++;
      else if (shapes[no] === OTHER) otherCount++;
      else if (shapes[no] !== FREE) throw new Error('the saved entry ids are inconsistent');
    }
    if (bytes.length !== (uuids > 0 ? shapes.length * 16 : 0) || otherCount !== others.length) throw new Error('the saved entry ids are inconsistent');
    this.#reserve(shapes.length);
    if (uuids > 0) {
      this.#reserveBytes(shapes.length);
      this.#bytes.set(bytes);
    }
    this.#rehash(Math.max(1024, 2 ** Math.ceil(Math.log2(uuids * 2 + 1))));
    for (let no = 0; no < shapes.length; no++) {
      if (shapes[no] !== UUID) continue;
      this.#place(no);
      this.#shapes[no] = UUID;
    }
    this.#uuids = uuids;
    for (const [no, id] of others) {
      if (shapes[no] !== OTHER) throw new Error('the saved entry ids are inconsistent');
      this.#others[no] = id;
      this.#otherNumbers.set(id, no);
      this.#shapes[no] = OTHER;
    }
  }

  /** Room for entry numbers below `n`. */
  #reserve(n: number): void {
    if (n <= this.#shapes.length) return;
    const shapes = new Uint8Array(Math.max(n, this.#shapes.length * 2));
    shapes.set(this.#shapes);
    this.#shapes = shapes;
  }

  /** Room for the bytes of entry numbers below `n`: only once a UUID is held (other ids need none). */
  #reserveBytes(n: number): void {
    if (n * 16 <= this.#bytes.length) return;
    const bytes = new Uint8Array(Math.max(n, (this.#bytes.length / 16) * 2) * 16);
    bytes.set(this.#bytes);
    this.#bytes = bytes;
  }

  /** The slot holding the UUID whose bytes are at `at` of `bytes`, or -1. */
  #find(bytes: Uint8Array, at: number): number {
    const slots = this.#slots;
    const mask = slots.length - 1;
    const own = this.#bytes;
    for (let slot = hashOf(bytes, at) & mask; ; slot = (slot + 1) & mask) {
      const held = slots[slot]!;
      if (held === 0) return -1;
      let i = (held - 1) * 16;
      let j = at;
      const end = j + 16;
      while (j < end && own[i] === bytes[j]) i++, j++;
      if (j === end) return slot;
    }
  }

  /** Files entry number `no` (its bytes written, not filed yet) in the table. */
  #place(no: number): void {
    const slots = this.#slots;
    const mask = slots.length - 1;
    let slot = hashOf(this.#bytes, no * 16) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = no + 1;
  }

  /** Empties `slot`, moving back the entries after it that probing would no longer reach. */
  #remove(slot: number): void {
    const slots = this.#slots;
    const mask = slots.length - 1;
    let hole = slot;
    for (let next = (hole + 1) & mask; slots[next] !== 0; next = (next + 1) & mask) {
      const home = hashOf(this.#bytes, (slots[next]! - 1) * 16) & mask;
      // The entry at `next` may fill the hole when its home is not cyclically in (hole, next].
      const reachable = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (reachable) continue;
      slots[hole] = slots[next]!;
      hole = next;
    }
    slots[hole] = 0;
  }

  /** A table of `size` slots (a power of two) holding every UUID held. */
  #rehash(size: number): void {
    const old = this.#slots;
    this.#slots = new Int32Array(size);
    for (let i = 0; i < old.length; i++) if (old[i] !== 0) this.#place(old[i]! - 1);
  }
}
