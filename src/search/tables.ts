/**
 * Dense per-unit and per-entry records in two Int32Arrays, 8 slots (32 bytes) per row.
 *
 * Why: at 100,000 entries a search touches ~15,000 units picked all over the index, and each
 * random access costs a cache miss. Keeping everything a unit needs during a search (scratch
 * accumulator, its entry, its filter attributes) in one row makes that one miss instead of six;
 * likewise for entries. Measured: the accumulation loop went from ~220 ns to a fraction of that
 * per posting.
 *
 * Unit rows (by unit id):
 *   U_EPOCH, U_WORDS, U_FIELDS, U_TOTAL  per-search scratch (see ./search-index.ts)
 *   U_ENTRY    entry number, or -1 when the unit id is free
 *   U_ORDINAL  0 = the entry itself, k = skills[k-1] or tools[k-1]
 *   U_HINTS    tool hint bits (./attributes.ts), 0 for other units
 *   U_POOL     offset of a skill's tags/modes in the attribute pool, or -1
 * Entry rows (by entry number):
 *   E_EPOCH, E_PASS, E_HITS, E_SHOWN  per-search scratch
 *   E_FLAGS    kind / streaming bits
 *   E_OWNER    owner id
 *   E_PROFILE  interface-profile id
 */

export const U_EPOCH = 0;
export const U_WORDS = 1;
export const U_FIELDS = 2;
export const U_TOTAL = 3;
export const U_ENTRY = 4;
export const U_ORDINAL = 5;
export const U_HINTS = 6;
export const U_POOL = 7;
/** log2 of the row size. */
export const U_SHIFT = 3;

export const E_EPOCH = 0;
export const E_PASS = 1;
export const E_HITS = 2;
export const E_SHOWN = 3;
export const E_FLAGS = 4;
export const E_OWNER = 5;
export const E_PROFILE = 6;
export const E_SHIFT = 3;

function grow(a: Int32Array, rows: number, shift: number, init: (out: Int32Array, from: number) => void): Int32Array {
  const need = rows << shift;
  if (a.length >= need) return a;
  let n = Math.max(1024 << shift, a.length);
  while (n < need) n *= 2;
  const out = new Int32Array(n);
  out.set(a);
  init(out, a.length);
  return out;
}

export class Tables {
  units: Int32Array = new Int32Array(0);
  entries: Int32Array = new Int32Array(0);
  /** By entry number: updatedAt in ms (ranking tie-break). */
  updatedAt: Float64Array = new Float64Array(0);

  /** Makes room for `entryRows` entries and `unitRows` units (arrays may be replaced). */
  reserve(entryRows: number, unitRows: number): void {
    this.units = grow(this.units, unitRows, U_SHIFT, (out, from) => {
      for (let i = from; i < out.length; i += 1 << U_SHIFT) {
        out[i + U_ENTRY] = -1;
        out[i + U_POOL] = -1;
      }
    });
    this.entries = grow(this.entries, entryRows, E_SHIFT, () => undefined);
    if (this.updatedAt.length < entryRows) {
      const out = new Float64Array(this.entries.length >> E_SHIFT);
      out.set(this.updatedAt);
      this.updatedAt = out;
    }
  }

  /** Clears every search stamp (after the epoch counter wraps). */
  resetEpochs(): void {
    for (let i = U_EPOCH; i < this.units.length; i += 1 << U_SHIFT) this.units[i] = 0;
    for (let i = E_EPOCH; i < this.entries.length; i += 1 << E_SHIFT) this.entries[i] = 0;
  }
}
