/**
 * The searchable fields of a unit, as bits. A term's posting is filed under the mask of every
 * field the term occurs in (see ./term-index.ts), so a lookup tells where it matched.
 *
 * Unit kinds and their fields:
 * - agent (the entry itself): name, description, provider
 * - skill: name, tags, description, examples
 * - mcp-server (the entry itself): name, description
 * - tool: name, title (tool title and annotation title), description
 */

export const FIELD_NAME = 1;
export const FIELD_TITLE = 2;
export const FIELD_TAGS = 4;
export const FIELD_DESCRIPTION = 8;
export const FIELD_EXAMPLES = 16;
export const FIELD_PROVIDER = 32;

/** Field names as hits report them in `match.fields`, in this order. */
const FIELDS: readonly (readonly [bit: number, name: string, weight: number])[] = [
  [FIELD_NAME, 'name', 10],
  [FIELD_TITLE, 'title', 9],
  [FIELD_TAGS, 'tags', 8],
  [FIELD_PROVIDER, 'provider', 6],
  [FIELD_DESCRIPTION, 'description', 4],
  [FIELD_EXAMPLES, 'examples', 2],
];

const ALL_MASKS = 64;

/**
 * Relevance of one query word matched in the fields of `mask`: the best field's weight plus a
 * quarter of the others' (a word in name and description beats one in name only, but never
 * lifts a lower field above a higher one: tags+description+examples = 9.5 < name = 10).
 */
const SCORES: Float64Array = (() => {
  const out = new Float64Array(ALL_MASKS);
  for (let mask = 1; mask < ALL_MASKS; mask++) {
    let best = 0;
    let sum = 0;
    for (const [bit, , weight] of FIELDS) {
      if (mask & bit) {
        best = Math.max(best, weight);
        sum += weight;
      }
    }
    out[mask] = best + (sum - best) / 4;
  }
  return out;
})();

const NAMES: readonly (readonly string[])[] = Array.from({ length: ALL_MASKS }, (_, mask) =>
  FIELDS.filter(([bit]) => mask & bit).map(([, name]) => name),
);

export function fieldScore(mask: number): number {
  return SCORES[mask & (ALL_MASKS - 1)] ?? 0;
}

/** The field names of `mask` (a shared array: copy before changing it). */
export function fieldNames(mask: number): readonly string[] {
  return NAMES[mask & (ALL_MASKS - 1)] ?? [];
}
