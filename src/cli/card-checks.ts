/**
 * What `sign` and `verify` check before they touch signatures: that the file is an agent card the
 * registry accepts (any size: the size limit is a registry's setting, not the card's).
 */
import type { Finding } from '../contract/types.js';
import { isObject, type JsonObject } from '../lib/json.js';
import { createDocumentValidator, type Generation } from '../validation/index.js';
import type { JsonSource } from './json-source.js';
import { LocalFileError } from './local-json.js';
import { EXIT_FAILED, EXIT_USAGE, formatFindings, printJson, styles, withLocation, type Locate, type Output } from './output.js';

export interface CheckedCard {
  card: JsonObject;
  generation: Generation;
  warnings: Finding[];
}

export class InvalidCard extends Error {
  constructor(
    message: string,
    readonly errors: Finding[],
    /** Where each finding's path is in the file. */
    readonly locate: Locate,
  ) {
    super(message);
  }
}

/** The card as the registry would read it; throws InvalidCard (or LocalFileError) when it is none. */
export function checkCard(source: JsonSource): CheckedCard {
  const value = source.value;
  if (!isObject(value)) throw new LocalFileError(`${source.file} is not an agent card (a JSON object)`);
  const validator = createDocumentValidator({ maxDocumentBytes: Number.MAX_SAFE_INTEGER, compileEagerly: false });
  const verdict = validator.validateAgentCard(value, 0);
  if (!verdict.valid) throw new InvalidCard(verdict.message ?? `${source.file} is not a valid agent card`, verdict.errors, (p) => source.locate(p));
  return { card: value, generation: verdict.generation ?? '1.0', warnings: verdict.warnings };
}

/**
 * How the offline commands (keygen, sign, verify) answer a card that is not a valid card or a
 * file they cannot use: the findings located in the user's file, or one line naming the file;
 * with --json also an {"error"} document on stdout. Returns the exit code; rethrows anything else.
 */
export function reportOfflineFailure(err: unknown, command: string, notDone: string, o: Output, json: boolean): number {
  const s = styles(o.color);
  if (err instanceof InvalidCard) {
    if (json) printJson(o, { error: { code: 'VALIDATION_FAILED', message: err.message, details: err.errors.map((f) => withLocation(f, err.locate)) } });
    o.err(`${s.red(`✗ ${notDone}`)}: ${err.message}\n${formatFindings(err.errors, 'error', s, err.locate)}`);
    return EXIT_FAILED;
  }
  if (!(err instanceof LocalFileError)) throw err;
  if (json) printJson(o, { error: { code: err.exitCode === EXIT_USAGE ? 'READ_ERROR' : 'FILE_ERROR', message: err.message } });
  o.err(`a2a-registry ${command}: ${err.message}\n`);
  return err.exitCode;
}
