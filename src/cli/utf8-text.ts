/**
 * JSON is UTF-8 (RFC 8259 §8.1), and the registry refuses a document that is not ("File part 0
 * is not valid UTF-8 text"). Decoded leniently, a card saved as Latin-1 or Windows-1252 turned
 * each accented letter into U+FFFD: `validate` said it was valid and `import`, which has no
 * registry to refuse it, stored the mangled names. This finds where such a file stops being
 * UTF-8, in the line and column an editor shows, so it is refused before anything is sent or stored.
 */
import { isUtf8 } from 'node:buffer';

/** Where `bytes` stop being UTF-8, and why (1-based line; column in UTF-16 code units, as JsonSource counts). */
export interface NotUtf8 {
  reason: string;
  line: number;
  column: number;
  /** The bytes begin with a UTF-16 byte-order mark: the whole text is UTF-16, not one bad byte of it. */
  utf16?: true;
}

const UTF8_BOM = '\ufeff';

/** Undefined for UTF-8 text (the usual case, one fast check); otherwise its first bad byte's place. */
export function whereNotUtf8(bytes: Uint8Array): NotUtf8 | undefined {
  if (isUtf8(bytes)) return undefined;
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return { reason: 'it is UTF-16 (it begins with a UTF-16 byte-order mark); JSON is UTF-8: save it as UTF-8', line: 1, column: 1, utf16: true };
  }
  const offset = firstInvalidByte(bytes);
  let before = Buffer.from(bytes.buffer, bytes.byteOffset, offset).toString('utf8');
  if (before.startsWith(UTF8_BOM)) before = before.slice(1); // JsonSource drops it too: columns agree
  const lines = before.split('\n');
  const byte = `0x${bytes[offset]!.toString(16).toUpperCase().padStart(2, '0')}`;
  return {
    reason: `byte ${byte} is not UTF-8 (saved as Latin-1 or Windows-1252?); JSON is UTF-8: save it as UTF-8`,
    line: lines.length,
    column: lines.at(-1)!.length + 1,
  };
}

/** The offset of the first byte that does not begin or continue a well-formed UTF-8 sequence (Unicode, table 3-7). */
function firstInvalidByte(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const lead = b[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const more = lead >= 0xc2 && lead <= 0xdf ? 1 : lead >= 0xe0 && lead <= 0xef ? 2 : lead >= 0xf0 && lead <= 0xf4 ? 3 : 0;
    if (more === 0) return i;
    // The second byte's range excludes overlong forms, surrogates and code points past U+10FFFF.
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k <= more; k++) {
      const next = b[i + k];
      if (next === undefined || next < (k === 1 ? low : 0x80) || next > (k === 1 ? high : 0xbf)) return i;
    }
    i += more + 1;
  }
  return b.length - 1;
}
