/**
 * Lengths of text as characters (Unicode code points), as JSON Schema's maxLength counts them and
 * people do: JavaScript's `length` counts UTF-16 code units, two for an emoji or another
 * character outside the Basic Multilingual Plane, so "🌤".repeat(600) was 1,200 "characters"
 * to a limit the MCP tools publish as maxLength 1000.
 */

/** An unpaired surrogate (JSON allows "\ud800"): no Unicode character, written as U+FFFD by every UTF-8 encoder. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Characters (code points) of `text`; a lone surrogate counts as one. */
export function codePointLength(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/**
 * Whether `text` has more than `max` characters (code points), as JSON Schema's maxLength counts
 * them: every door's own length checks and the search's bound on a filter value, which counted
 * UTF-16 units (101 emoji were "over 200 characters"). Counted only when its UTF-16 length is over.
 */
export const longerThan = (text: string, max: number): boolean => text.length > max && codePointLength(text) > max;

/** The first `max` characters (code points) of `text`, never half a surrogate pair. */
export function codePointPrefix(text: string, max: number): string {
  if (text.length <= max) return text;
  let units = 0;
  for (let n = 0; n < max && units < text.length; n++) {
    const c = text.charCodeAt(units);
    const next = text.charCodeAt(units + 1);
    units += c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
  }
  return text.slice(0, units);
}
