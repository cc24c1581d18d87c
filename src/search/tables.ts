/**
 * Dense per-unit and per-entry records in Int32Arrays, a fixed number of slots per row.
 *
 * Why: at 100,000 entries a search touches ~10,000 units scattered over the index, and every
 * random access is a cache miss, which is most of a search's cost. So what the hot loop reads
 * per posting sits in one small "hot" row (one miss), per-search values that are only updated
 * live in dense candidate arrays (./search-index.ts), and what only first sight of a unit or
 * entry, or the final page, needs sits in "cold" rows. Measured at 100,000 entries: ~220 ns
 * per posting with separate arrays and entry objects, a fraction of that with rows.
 *
 * Hot unit rows (`units`, by unit id, 4 slots):
 *   U_EPOCH   search stamp: +epoch collected, -epoch filtered out
 *   U_POS     position of the unit in this search's candidate arrays
 *   U_ENTRY   entry number, or -1 when the unit id is free
 *   U_ATTR    filter attributes packed in bits (./attributes.ts): kind, streaming, skill or
 *             tool, tool hints, interface profile; most filters reject a unit on this alone
 * Cold unit rows (`info`, by unit id, 2 slots):
 *   I_ORDINAL 0 = the entry itself, k = skills[k-1] or tools[k-1]
 *   I_POOL    offset of a skill's tags/modes in the attribute pool, or -1
 * Hot entry rows (`entries`, by entry number, 2 slots):
 *   E_EPOCH   search stamp
 *   E_HITS    candidates of this entry in this search, or -1 when the filter rejects it
 * Cold entry rows (`entryInfo`, by entry number, 4 slots):
 *   F_OWNER   owner id
 *   F_PROFILE interface-profile id
 *   F_SHOWN   paging scratch (hits of the entry placed so far; 0 between searches)
 */

export const U_EPOCH = 0;
export const U_POS = 1;
export const U_ENTRY = 2;
export const U_ATTR = 3;
/** log2 of the row size. */
export const U_SHIFT = 2;

export const I_ORDINAL = 0;
export const I_POOL = 1;
export const I_SHIFT = 1;

export const E_EPOCH = 0;
export const E_HITS = 1;
export const E_SHIFT = 1;

export const F_OWNER = 0;
export const F_PROFILE = 1;
export const F_SHOWN = 2;
export const F_SHIFT = 2;

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
  info: Int32Array = new Int32Array(0);
  entries: Int32Array = new Int32Array(0);
  entryInfo: Int32Array = new Int32Array(0);
  /** By entry number: updatedAt in ms (ranking tie-break). */
  updatedAt: Float64Array = new Float64Array(0);

  /** Makes room for `entryRows` entries and `unitRows` units (arrays may be replaced). */
  reserve(entryRows: number, unitRows: number): void {
    this.units = grow(this.units, unitRows, U_SHIFT, (out, from) => {
      for (let i = from; i < out.length; i += 1 << U_SHIFT) out[i + U_ENTRY] = -1;
    });
    this.info = grow(this.info, unitRows, I_SHIFT, (out, from) => {
      for (let i = from; i < out.length; i += 1 << I_SHIFT) out[i + I_POOL] = -1;
    });
    this.entries = grow(this.entries, entryRows, E_SHIFT, () => undefined);
    this.entryInfo = grow(this.entryInfo, entryRows, F_SHIFT, () => undefined);
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
