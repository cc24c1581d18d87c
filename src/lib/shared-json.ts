/**
 * Values many answers carry unchanged (a search answer the search cache keeps is sent to every
 * request that asks the same): their JSON is made once, as UTF-8 bytes, and answers splice those
 * bytes in instead of serialising and encoding the same value again (src/http/json-answer.ts).
 * Only frozen values may be shared: their text can never go stale.
 *
 * The bytes live as long as their value, which tasks held in memory keep for up to
 * REGISTRY_TASK_MEMORY_TTL_SECONDS: each gets a store of its own size (ownBytes). Buffer.from
 * takes a string under 32 KiB from a shared 64 KiB pool block (Buffer.poolSize), and a slice kept
 * keeps its whole block alive, however small (a soak audit found 64 KiB blocks held by summaries
 * of 22 bytes, the rest of each block long garbage).
 */
import { memoryBytes } from './memory-size.js';

interface Made {
  bytes: Buffer;
  /** About how many bytes the value itself takes (memory-size.ts), counted once. */
  valueBytes: number;
}

const shared = new WeakMap<object, Made | null>();
/** The text that goes with a shared value in every answer (its summary), and that text's JSON. */
const companions = new WeakMap<object, { text: string; bytes: Buffer }>();

/** `text` as UTF-8 in a store of its own, never a slice of the pool (see the top). */
export function ownBytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

/** Marks a frozen value as shared by many answers; its bytes are made when first asked for. */
export function shareJson(value: object): void {
  if (!Object.isFrozen(value)) throw new TypeError('shareJson: only a frozen value can be shared (its JSON would go stale)');
  if (!shared.has(value)) shared.set(value, null);
}

/** Whether the value is shared (shareJson). */
export function isSharedJson(value: object): boolean {
  return shared.has(value);
}

function made(value: object): Made | undefined {
  const found = shared.get(value);
  if (found !== null) return found;
  const making = { bytes: ownBytes(JSON.stringify(value)), valueBytes: memoryBytes(value) };
  shared.set(value, making);
  return making;
}

/** The value's JSON as UTF-8 bytes when it is shared (made once), or undefined when it is not. */
export function sharedJsonBytes(value: unknown): Buffer | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return made(value)?.bytes;
}

/**
 * About how many bytes of memory a shared value holds while something keeps it: the value, its
 * JSON and its companion's JSON (the companion text is counted by whoever holds it, as a task's
 * text part does). 0 when it is not shared.
 */
export function sharedMemoryBytes(value: object): number {
  const kept = made(value);
  if (!kept) return 0;
  const companion = companions.get(value);
  // Each Buffer as memory-size.ts counts any binary part: its bytes and the store behind them.
  return kept.valueBytes + memoryBytes(kept.bytes) + (companion ? memoryBytes(companion.bytes) : 0);
}

/** The text every answer carrying this shared value carries beside it (e.g. its summary): its JSON is made once too. */
export function shareJsonText(value: object, text: string): void {
  if (shared.has(value) && !companions.has(value)) companions.set(value, { text, bytes: ownBytes(JSON.stringify(text)) });
}

/** The JSON of `text` as UTF-8 bytes when it is the text shared beside `value`, or undefined. */
export function sharedTextBytes(value: object, text: unknown): Buffer | undefined {
  const companion = companions.get(value);
  return companion && companion.text === text ? companion.bytes : undefined;
}
