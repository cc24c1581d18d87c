/**
 * Agent card validation: size, shape, generation, schema, then warnings.
 *
 * Order matters: the size limit comes first so every later step works on bounded input; the
 * generation is decided before any schema runs (a card may satisfy both schemas); the fast
 * validator runs first and the allErrors one only to explain a card that already failed.
 */
import type { Finding } from '../contract/types.js';
import type { CompiledPair } from './ajv-instances.js';
import { cardWarnings, legacyAuthenticationWarning } from './card-checks.js';
import { detectGeneration } from './detect.js';
import { cardEndpointUrls, checkEndpointUrls, withCheckedEndpoints } from './endpoint-urls.js';
import { cardHints, MIXED_GENERATION_FIELDS } from './hints.js';
import { isObject, quote, type JsonObject } from '../lib/json.js';
import { mediaTypeWarnings } from './media-types.js';
import { securityReferenceErrors } from './security-requirements.js';
import { compactJsonBytes } from './size.js';
import { translateAjvErrors } from './translate.js';
import type { Generation, ValidatorOptions, Verdict, WrittenText } from './types.js';
import { accepted, failureMessage, rejected, tooLarge } from './verdict.js';
import { AGENT_CARD_TEXT, displayTextFindings } from './display-text.js';
import { fidelityFindings } from './json-fidelity.js';
import { nulCharacterErrors } from './nul-characters.js';

export interface CardValidators {
  cardV03: CompiledPair;
  cardV10: CompiledPair;
}

function schemaErrors(pair: CompiledPair, card: JsonObject, generation: Generation): Finding[] {
  if (pair.fast(card)) return [];
  pair.explain(card);
  return translateAjvErrors(pair.explain.errors ?? [], '', cardHints(card, generation));
}

/**
 * For a card of no accepted version: the errors it would still have as a v1.0 card *and* as a
 * v0.3 card (missing tags, capabilities given as an array...). They must be fixed whichever
 * way the author goes, so saying them now saves round trips; errors that depend on the choice
 * (interfaces, security scheme shapes) are left to the version finding.
 */
function commonErrors(v: CardValidators, card: JsonObject): Finding[] {
  const asV10 = schemaErrors(v.cardV10, card, '1.0').filter((e) => !e.path.startsWith('/supportedInterfaces') && e.rule !== 'mixed-generation');
  if (asV10.length === 0) return [];
  const asV03 = new Set(schemaErrors(v.cardV03, { ...card, protocolVersion: '0.3.0' }, '0.3').map((e) => `${e.path} ${e.rule}`));
  return asV10.filter((e) => asV03.has(`${e.path} ${e.rule}`));
}

function mixedGenerationMessage(errors: Finding[]): string {
  const mixed = errors.filter((e) => e.rule === 'mixed-generation');
  const fields = mixed.map((e) => e.path.slice(1));
  const others = errors.length - fields.length;
  // Each field's own hint (it may quote the replacement written out), as a clause.
  const adviceOf = (e: Finding): string => (e.hint ? e.hint[0]!.toLowerCase() + e.hint.slice(1).replace(/\.$/, '') : (MIXED_GENERATION_FIELDS[e.path.slice(1)] ?? 'remove it'));
  const what = mixed.map((e) => `${quote(e.path.slice(1))}: ${adviceOf(e)}`).join('; ');
  return (
    `This card mixes A2A generations: it has "supportedInterfaces" (v1.0) and also the v0.3 field${fields.length === 1 ? '' : 's'} ${fields.map((f) => quote(f)).join(', ')}. ` +
    `Fix: ${what}.` +
    (others > 0 ? ` There ${others === 1 ? 'is 1 other error' : `are ${others} other errors`}; see the details.` : '')
  );
}

export function validateAgentCard(v: CardValidators, options: ValidatorOptions, card: unknown, sizeBytes: number, written?: WrittenText): Verdict {
  if (sizeBytes > options.maxDocumentBytes) {
    // Measuring the compact form costs one stringify, paid only on this failure path; it lets
    // the message say when minifying the file is all it takes.
    return tooLarge('agent', 'agent card', sizeBytes, options.maxDocumentBytes, isObject(card) ? compactJsonBytes(card) : undefined);
  }
  if (!isObject(card)) {
    return rejected('agent', 'VALIDATION_FAILED', `An agent card must be a JSON object; this document is ${Array.isArray(card) ? 'an array' : typeof card === 'string' ? 'a string' : card === null ? 'null' : typeof card}.`, sizeBytes, [{ path: '', rule: 'type', message: 'must be a JSON object' }], []);
  }

  const detection = detectGeneration(card);
  // A number JSON cannot hold (1e400, stored as null) or a key given twice: the document would
  // not be stored as written, and its other findings would be of what was read instead.
  const fidelity = fidelityFindings([{ value: card, at: '', text: written?.text }]);
  if (fidelity.errors.length > 0) {
    const generation = detection.ok ? detection.generation : undefined;
    const label = generation ? `A2A v${generation} agent card` : 'agent card';
    return rejected('agent', 'VALIDATION_FAILED', failureMessage(label, fidelity.errors), sizeBytes, fidelity.errors, fidelity.warnings, generation);
  }
  if (!detection.ok) {
    // Warnings that hold whichever version the author moves to.
    const legacy = legacyAuthenticationWarning(card);
    const warnings = [...fidelity.warnings, ...(legacy ? [legacy] : []), ...mediaTypeWarnings(card)];
    return rejected('agent', 'UNSUPPORTED_VERSION', detection.message, sizeBytes, [...detection.errors, ...commonErrors(v, card)], warnings);
  }
  const { generation } = detection;

  const errors = schemaErrors(generation === '1.0' ? v.cardV10 : v.cardV03, card, generation);
  let warnings = [...fidelity.warnings, ...cardWarnings(card, generation, options.warnInsecureHttp === true)];
  // Interface URLs identify the agent: schemes, credentials and control characters are errors
  // (a URL the schema already faulted is not reported twice, nor warned about as well).
  const endpoints = checkEndpointUrls(cardEndpointUrls(card, generation));
  const urlErrors = endpoints.errors.filter((u) => !errors.some((e) => e.path === u.path));
  if (urlErrors.length > 0) {
    errors.push(...urlErrors);
    const faulted = new Set(urlErrors.map((e) => e.path));
    warnings = warnings.filter((w) => !faulted.has(w.path));
  }
  // Requirements naming undeclared schemes (a reference the schema already faulted, such as
  // scopes given as a string, is not reported twice).
  errors.push(...securityReferenceErrors(card, generation).filter((f) => !errors.some((e) => e.path === f.path)));
  // A text the schema already faulted (an empty name) is not reported twice.
  const text = displayTextFindings(card, AGENT_CARD_TEXT);
  errors.push(...text.errors.filter((f) => !errors.some((e) => e.path === f.path)));
  warnings.push(...text.warnings);
  // U+0000 anywhere else (an extension's params, a key): said once where a check above said it.
  errors.push(...nulCharacterErrors(card).filter((f) => !errors.some((e) => e.path === f.path)));
  if (errors.length === 0) return withCheckedEndpoints(accepted('agent', sizeBytes, warnings, generation), endpoints.checked);

  const label = `A2A v${generation} agent card`;
  const message = errors.some((e) => e.rule === 'mixed-generation') ? mixedGenerationMessage(errors) : failureMessage(label, errors);
  return rejected('agent', 'VALIDATION_FAILED', message, sizeBytes, errors, warnings, generation);
}
