/**
 * What an index's state is made of when it is saved (./snapshot-file.ts writes and reads it):
 * named parts, each a typed array, an array of strings, or a small structured value. Each
 * structure of the index saves its own parts (copies, taken at one synchronous moment, so the
 * live index may change while they are written) and loads them back.
 */
export type StatePart = Int32Array | Uint8Array | Uint16Array | Float64Array | readonly (string | undefined)[] | unknown;

export type IndexState = Map<string, StatePart>;

/**
 * A saved state, and what to call once it is written. The largest parts (postings, pools) are
 * not copied but shared with the live index, which leaves them unchanged until `release`
 * (changes go to room past their saved end, or to new arrays): copying them held the event
 * loop for most of a second per 100,000 entries on a busy machine, and doubled their memory.
 */
export interface SavedState {
  parts: IndexState;
  release(): void;
}

/**
 * An Int32Array part made of `pieces`: views shared with the live index, which leaves them
 * unchanged (members are only appended past a view's end; a list that changes otherwise gets
 * a new array), so many small arrays are saved without copying them when the index is taken.
 * ./snapshot-file.ts writes it as one Int32Array, which is what a file reads back;
 * `int32Part` takes either.
 */
export class Int32Pieces {
  readonly length: number;
  constructor(readonly pieces: readonly Int32Array[]) {
    this.length = pieces.reduce((n, p) => n + p.length, 0);
  }

  /** The pieces as one array (a copy). */
  joined(): Int32Array<ArrayBuffer> {
    return concatenated(this.pieces, new Int32Array(this.length));
  }
}

/** `pieces` copied one after the other into `out` (as long as all of them). */
export function concatenated<T extends Int32Array | Float64Array>(pieces: readonly ArrayLike<number>[], out: T): T {
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** An Int32Array part, saved as one or as Int32Pieces (an index loaded from a state in memory, not from a file). */
export function int32Part(state: IndexState, name: string): Int32Array<ArrayBuffer> {
  const v = part<Int32Array<ArrayBuffer> | Int32Pieces>(state, name);
  return v instanceof Int32Pieces ? v.joined() : v;
}

/** A part of a state being loaded; a missing part means the state is not one this code wrote. */
export function part<T>(state: IndexState, name: string): T {
  if (!state.has(name)) throw new Error(`the saved index has no part "${name}"`);
  return state.get(name) as T;
}
