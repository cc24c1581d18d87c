/**
 * What reaches a person's terminal. Most of what the CLI prints comes from elsewhere: names,
 * descriptions, tags and URLs of registered documents (anyone with a token wrote them), the
 * registry's error messages, local files. A terminal obeys control characters in that text:
 * ESC sequences recolour it, set the window title or clear the screen; a carriage return
 * overwrites what was printed; bidi overrides reorder a line so that it reads as something else.
 * So every character of that kind is shown escaped, as `\u001b`, never written raw.
 *
 * The CLI's own colours are escape sequences too. They are written as markers carrying a key
 * made for this process, which no registered text can know, and turned into escape sequences
 * only after the text around them has been made safe: text that imitates them stays escaped.
 */
import { randomBytes } from 'node:crypto';

/**
 * C0 controls but the newline (the layout's own line breaks), DEL, C1 controls (U+009B is a
 * one-character CSI to some terminals), and the bidi embeddings, overrides and isolates.
 */
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with each unsafe character written as `\uXXXX`. The form of a JSON escape, so JSON
 * printed through here stays JSON with the same value (JSON.stringify writes C1 controls and
 * bidi characters raw); a backslash is left as it is for the same reason.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Private-use characters around the key: what a colour marker looks like, never shown. */
const MARKER_KEY = randomBytes(12).toString('hex');
const MARKER = new RegExp(`\u{e000}${MARKER_KEY}([0-9;]+)\u{e001}`, 'g');

/** A marker for the SGR sequence `ESC [ code m` (31 red, 1 bold, 0 reset), made real by `forTerminal`. */
export const sgrMarker = (code: string): string => `\u{e000}${MARKER_KEY}${code}\u{e001}`;

/**
 * The text as written to stdout or stderr: made safe, then the CLI's own colour markers made
 * escape sequences, or dropped where that stream does not show colour (`colour` false).
 */
export function forTerminal(text: string, colour = true): string {
  return terminalSafe(text).replace(MARKER, colour ? '\u001b[$1m' : '');
}
