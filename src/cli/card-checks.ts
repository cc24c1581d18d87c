/**
 * What `sign` and `verify` check before they touch signatures: that the file is an agent card the
 * registry accepts (any size: the size limit is a registry's setting, not the card's).
 */
import type { Finding } from '../contract/types.js';
import { isObject, type JsonObject } from '../lib/json.js';
import { createDocumentValidator, type Generation } from '../validation/index.js';
import type { JsonSource } from './json-source.js';
import { LocalFileError } from './local-json.js';
import { InvalidCard } from './offline-failure.js';

export interface CheckedCard {
  card: JsonObject;
  generation: Generation;
  warnings: Finding[];
}

/**
 * The card as the registry would read it; throws InvalidCard (or LocalFileError) when it is none.
 * `value`: what to check in place of the file's value (its findings still point into the file).
 */
export function checkCard(source: JsonSource, value: unknown = source.value): CheckedCard {
  if (!isObject(value)) throw new LocalFileError(`${source.file} is not an agent card (a JSON object)`);
  const validator = createDocumentValidator({ maxDocumentBytes: Number.MAX_SAFE_INTEGER, compileEagerly: false });
  const verdict = validator.validateAgentCard(value, 0);
  if (!verdict.valid) throw new InvalidCard(verdict.message ?? `${source.file} is not a valid agent card`, verdict.errors, (p) => source.locate(p));
  return { card: value, generation: verdict.generation ?? '1.0', warnings: verdict.warnings };
}
