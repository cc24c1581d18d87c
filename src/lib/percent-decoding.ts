/**
 * Percent-decoding that says when it cannot: decodeURIComponent throws on an escape that is not
 * UTF-8 (`%ff`, a lone `%E2%82`), and each caller decides what that means (a refusal, the text as
 * written, no match).
 */

/** `text` with its percent escapes decoded as UTF-8, or undefined when they are not valid UTF-8 (or a `%` not followed by two hex digits). */
export function percentDecodedOrUndefined(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
