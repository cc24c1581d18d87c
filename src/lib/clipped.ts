import { codePointLength, codePointPrefix } from './code-points.js';

/**
 * Text a message quotes from what someone else chose (a header, an id, a URL), cut to its first
 * `max` characters and an ellipsis when longer: enough to recognise it, never the whole of a
 * value that may run to kilobytes into a refusal, a log line or an entry's health. Counted and cut
 * in characters (code points): a cut by UTF-16 units could split an emoji or a rare ideograph into
 * half a surrogate pair, U+FFFD (or "\\ud83c" in JSON) where the text should be.
 */
export const clipped = (text: string, max: number): string => (codePointLength(text) > max ? `${codePointPrefix(text, max)}…` : text);
