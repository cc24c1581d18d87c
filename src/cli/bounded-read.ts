/**
 * Reading a document the user names (a card, a toolspec, a key) without trusting its size:
 * `register /dev/zero`, a log file given by mistake or `yes | a2a-registry validate -` read whole
 * never finished, or ran out of memory, before any check could say it is the wrong file. At
 * most one byte more than the limit is read; past it the file is refused by name.
 */
import fs from 'node:fs/promises';

/** The most any registry accepts for a document: REGISTRY_MAX_DOCUMENT_BYTES at its highest. */
export const MAX_DOCUMENT_FILE_BYTES = 1024 * 1024;

/** How messages name a file the user gave: "-" is standard input. */
export const inputName = (file: string): string => (file === '-' ? 'standard input' : file);

/** A file longer than the limit: only its first limit + 1 bytes were read. */
export class FileTooLarge extends Error {
  constructor(
    readonly file: string,
    readonly limit: number,
  ) {
    super(
      `${inputName(file)} is over ${limit.toLocaleString('en-US')} bytes${limit === MAX_DOCUMENT_FILE_BYTES ? ' (1 MiB), more than any registry accepts for a document (REGISTRY_MAX_DOCUMENT_BYTES at its highest)' : ''}; it was not read further: is it the right file?`,
    );
  }
}

const CHUNK_BYTES = 64 * 1024;

/** The bytes of `file` ("-": standard input); FileTooLarge past `limit`, a file system error as thrown. */
export async function readBounded(file: string, limit: number = MAX_DOCUMENT_FILE_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  const take = (chunk: Buffer): void => {
    chunks.push(chunk);
    length += chunk.length;
    if (length > limit) throw new FileTooLarge(file, limit);
  };
  if (file === '-') {
    // Leaving the loop early (too large) destroys stdin: the writer gets EPIPE, not a hang.
    for await (const chunk of process.stdin) take(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return Buffer.concat(chunks, length);
  }
  const handle = await fs.open(file, 'r');
  try {
    for (;;) {
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, limit + 1 - length));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks, length);
      take(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
}
