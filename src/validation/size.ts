/**
 * Document size, measured the way the contract says: the decoded bytes of a file part, or the
 * compact JSON serialisation of a data-part document. The limit is checked before anything else
 * looks at the document, so every later step works on bounded input.
 */

/** Byte length of JSON.stringify(value) in UTF-8 (the contract's measure for data parts). */
export function compactJsonBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}

/** 10240 -> "10,240 bytes": sizes in messages are read by people. */
export function formatBytes(n: number): string {
  return `${n.toLocaleString('en-US')} byte${n === 1 ? '' : 's'}`;
}
