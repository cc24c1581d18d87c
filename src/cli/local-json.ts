/**
 * Reading and writing the JSON files the offline commands work on (cards, keys, key sets), with
 * one-line messages that say which file and what is wrong (`card.json:12:7: ...` for JSON
 * mistakes, as `validate` and `register` print them). A failure is a `LocalFileError` with the
 * exit code the commands return: 2 for a file that cannot be read (as every command), 1 otherwise.
 */
import fs from 'node:fs/promises';
import { JsonSource, JsonSyntaxError } from './json-source.js';
import { readProblem } from './commands/validate.js';
import { EXIT_FAILED, EXIT_USAGE } from './output.js';

export class LocalFileError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILED,
  ) {
    super(message);
  }
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks);
}

/** Parses a JSON file ("-": stdin); a UTF-8 byte order mark is tolerated. */
export async function readJsonFile(file: string): Promise<JsonSource> {
  let bytes: Buffer;
  try {
    bytes = file === '-' ? await readStdin() : await fs.readFile(file);
  } catch (err) {
    throw new LocalFileError(readProblem(file, err), EXIT_USAGE);
  }
  try {
    return JsonSource.parse(file === '-' ? 'standard input' : file, bytes);
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new LocalFileError(err.message);
    throw err;
  }
}

/**
 * Writes `value` as indented JSON. `secret`: readable by the owner only (0600), and never over an
 * existing file unless `overwrite`.
 */
export async function writeJsonFile(file: string, value: unknown, options: { secret?: boolean; overwrite?: boolean } = {}): Promise<void> {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  try {
    await fs.writeFile(file, text, { mode: options.secret ? 0o600 : 0o644, flag: options.overwrite ? 'w' : 'wx' });
    if (options.secret) await fs.chmod(file, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new LocalFileError(`${file} already exists; choose another file, or pass --force to replace it`);
    throw new LocalFileError(`cannot write ${file}: ${(err as Error).message}`);
  }
}
