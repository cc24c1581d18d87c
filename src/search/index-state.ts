/**
 * What an index's state is made of when it is saved (./snapshot-file.ts writes and reads it):
 * named parts, each a typed array, an array of strings, or a small structured value. Each
 * structure of the index saves its own parts (copies, taken at one synchronous moment, so the
 * live index may change while they are written) and loads them back.
 */
export type StatePart = Int32Array | Uint8Array | Uint16Array | Float64Array | readonly (string | undefined)[] | unknown;

export type IndexState = Map<string, StatePart>;

/** A part of a state being loaded; a missing part means the state is not one this code wrote. */
export function part<T>(state: IndexState, name: string): T {
  if (!state.has(name)) throw new Error(`the saved index has no part "${name}"`);
  return state.get(name) as T;
}
