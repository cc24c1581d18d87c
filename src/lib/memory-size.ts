/**
 * About how many bytes of memory a plain value (JSON-like data: objects, arrays, strings,
 * numbers, binary parts) holds, as V8 lays it out in Node.js on 64-bit machines (no pointer
 * compression: every field is 8 bytes). What bounds memory by bytes (the tasks held in memory,
 * src/tasks/bounded-memory.ts) counts with this: a value's JSON length, which was counted
 * before, is a third to a half of what the parsed value takes (every object and array has a
 * header and a slot per field, every string a header: a search answer of 8.5 KB of JSON, parsed,
 * holds about 17 KB).
 *
 * One walk, no serialisation, no allocation but its stack: cheap enough to run on every save.
 * Strings and values reached twice are counted twice, so a value sharing its strings with others
 * is counted as though it had its own: an estimate that errs on the side of the bound.
 */

/** An object's header (map, properties, elements). */
const OBJECT_BYTES = 24;
/** A field, an array element: a pointer (or a small integer in place). */
const SLOT_BYTES = 8;
/** An array: the JSArray (header and length) and its elements' store (header and length). */
const ARRAY_BYTES = 32 + 16;
/** A string's header (map, hash, length); its characters follow, 1 byte each (2 past Latin-1), padded to 8. */
const STRING_BYTES = 16;
/** A number that is not a small integer is boxed. */
const HEAP_NUMBER_BYTES = 16;
/** A binary part beyond its bytes: the typed array, its ArrayBuffer and the store behind them. */
const BINARY_BYTES = 200;

/** Characters past Latin-1: V8 stores the whole string at 2 bytes each (a one-byte string fails this at once). */
const WIDE = /[^\u0000-\u00ff]/;

const padded = (bytes: number) => (bytes + 7) & ~7;

/** About how many bytes a string takes. */
export function stringBytes(text: string): number {
  return STRING_BYTES + padded(WIDE.test(text) ? text.length * 2 : text.length);
}

/**
 * About how many bytes `value` holds. `apart` is asked for each object met: one it claims (true)
 * is not counted or walked (the caller counts it on its own, e.g. once however many hold it); the
 * slot pointing at it is.
 */
export function memoryBytes(value: unknown, apart?: (v: object) => boolean): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += stringBytes(v);
    else if (typeof v === 'number') total += Number.isInteger(v) && Math.abs(v) < 2 ** 31 ? 0 : HEAP_NUMBER_BYTES;
    else if (typeof v === 'bigint') total += HEAP_NUMBER_BYTES + SLOT_BYTES;
    else if (v !== null && typeof v === 'object') {
      if (apart?.(v)) continue;
      if (ArrayBuffer.isView(v)) {
        total += BINARY_BYTES + v.byteLength;
        continue;
      }
      if (Array.isArray(v)) {
        total += ARRAY_BYTES + v.length * SLOT_BYTES;
        for (let i = 0; i < v.length; i++) stack.push(v[i]);
        continue;
      }
      total += OBJECT_BYTES;
      for (const key in v) {
        total += SLOT_BYTES;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return total;
}
