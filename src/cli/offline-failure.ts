/**
 * How the offline commands (keygen, sign, verify) report what stops them: a card that is not a
 * valid card (InvalidCard, from ./card-checks.ts) or a file they cannot use. Apart from the card
 * checks so that keygen, which checks no card, does not load the validator.
 */
import type { Finding } from '../contract/types.js';
import { LocalFileError } from './local-json.js';
import { EXIT_FAILED, EXIT_USAGE, formatFindings, printJson, styles, withLocation, type Locate, type Output } from './output.js';

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

/**
 * How the offline commands (keygen, sign, verify) answer a card that is not a valid card or a
 * file they cannot use: the findings located in the user's file, or one line naming the file;
 * with --json also an {"error"} document on stdout. Returns the exit code; rethrows anything else.
 */
export function reportOfflineFailure(err: unknown, notDone: string, o: Output, json: boolean): number {
  const s = styles(o.color);
  if (err instanceof InvalidCard) {
    if (json) printJson(o, { error: { code: 'VALIDATION_FAILED', message: err.message, details: err.errors.map((f) => withLocation(f, err.locate)) } });
    o.err(`${s.red(`✗ ${notDone}`)}: ${err.message}\n${formatFindings(err.errors, 'error', s, err.locate)}`);
    return EXIT_FAILED;
  }
  if (!(err instanceof LocalFileError)) throw err;
  if (json) printJson(o, { error: { code: err.code ?? (err.exitCode === EXIT_USAGE ? 'READ_ERROR' : 'FILE_ERROR'), message: err.message } });
  // The program's name alone, as every other command's errors say (it was "a2a-registry sign:").
  o.err(`a2a-registry: ${err.message}\n`);
  return err.exitCode;
}
