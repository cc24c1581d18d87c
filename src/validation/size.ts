/**
 * Document size, measured the way the contract says: the decoded bytes of a file part, or the
 * compact JSON serialisation of a data-part document. The limit is checked before anything else
 * looks at the document, so every later step works on bounded input.
 */

/** Byte length of JSON.stringify(value) in UTF-8 (the contract's measure for data parts). */
export function compactJsonBytes(value: unknown): number {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    // JSON.parse accepts nesting far deeper than JSON.stringify can recurse; measure such a
    // value without recursion instead of letting a hostile document throw.
    if (err instanceof RangeError) return iterativeJsonBytes(value);
    throw err;
  }
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * The same count as compactJsonBytes for plain JSON data (what JSON.parse returns), with an
 * explicit stack. Leaves are measured with JSON.stringify, which never recurses on them.
 */
function iterativeJsonBytes(root: unknown): number {
  let bytes = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      bytes += 2 + Math.max(0, node.length - 1); // brackets and commas
      for (const item of node) {
        // JSON.stringify writes null for undefined, functions and symbols in arrays.
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') bytes += 4;
        else stack.push(item);
      }
    } else if (typeof node === 'object' && node !== null) {
      const entries = Object.entries(node).filter(([, v]) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol');
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [key, v] of entries) {
        bytes += utf8(JSON.stringify(key)) + 1; // "key":
        stack.push(v);
      }
    } else {
      bytes += utf8(JSON.stringify(node) ?? 'null');
    }
  }
  return bytes;
}

/** 10240 -> "10,240 bytes": sizes in messages are read by people. */
export function formatBytes(n: number): string {
  return `${n.toLocaleString('en-US')} byte${n === 1 ? '' : 's'}`;
}
