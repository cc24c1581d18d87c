/**
 * Text the page did not write, shown among its own words: a value from a link, the registry's
 * messages (which quote what a request or a document gave). A bidirectional control in it
 * (U+202E RIGHT-TO-LEFT OVERRIDE, an isolate, a mark) reorders the words after it: a link to
 * /entries/%E2%80%AEfdp.exe read `No entry has id "."exe.pdf`.
 */

/** Bidirectional controls and the invisible marks: U+061C, U+200E/F, U+202A-E, U+2066-9. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The text with each bidirectional control written as its \uXXXX escape: it reads as it is, and says what it holds. */
export const showBidiControls = (text: string): string => text.replace(BIDI_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * `text` isolated from the words around it (<bdi>: a right-to-left name keeps its own direction
 * and moves nothing beside it), its bidirectional controls shown as escapes (they would reorder
 * the rest of the message they stand in, the page's words after the quoted value included).
 */
export function Foreign({ text }: { text: string }) {
  return <bdi>{showBidiControls(text)}</bdi>;
}
