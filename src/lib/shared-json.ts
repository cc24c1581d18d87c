/**
 * Values many answers carry unchanged (a search answer the search cache keeps is sent to every
 * request that asks the same): their JSON is made once, as UTF-8 bytes, and answers splice those
 * bytes in instead of serialising and encoding the same value again (src/http/json-answer.ts).
 * Only frozen values may be shared: their text can never go stale.
 */

const shared = new WeakMap<object, Buffer | null>();
/** The text that goes with a shared value in every answer (its summary), and that text's JSON. */
const companions = new WeakMap<object, { text: string; bytes: Buffer }>();

/** Marks a frozen value as shared by many answers; its bytes are made when first asked for. */
export function shareJson(value: object): void {
  if (!Object.isFrozen(value)) throw new TypeError('shareJson: only a frozen value can be shared (its JSON would go stale)');
  if (!shared.has(value)) shared.set(value, null);
}

/** The value's JSON as UTF-8 bytes when it is shared (made once), or undefined when it is not. */
export function sharedJsonBytes(value: unknown): Buffer | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const bytes = shared.get(value);
  if (bytes !== null) return bytes;
  const made = Buffer.from(JSON.stringify(value));
  shared.set(value, made);
  return made;
}

/** The text every answer carrying this shared value carries beside it (e.g. its summary): its JSON is made once too. */
export function shareJsonText(value: object, text: string): void {
  if (shared.has(value) && !companions.has(value)) companions.set(value, { text, bytes: Buffer.from(JSON.stringify(text)) });
}

/** The JSON of `text` as UTF-8 bytes when it is the text shared beside `value`, or undefined. */
export function sharedTextBytes(value: object, text: unknown): Buffer | undefined {
  const companion = companions.get(value);
  return companion && companion.text === text ? companion.bytes : undefined;
}
