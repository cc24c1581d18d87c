/**
 * Decides which A2A generation a card claims to be, before any schema runs, exactly as the
 * contract says: `supportedInterfaces` present -> v1.0; otherwise `protocolVersion` "0.3" or
 * "0.3.x" -> v0.3; anything else is UNSUPPORTED_VERSION. Deciding first matters because a card
 * can carry fields of both generations and then pass both schemas; the SDK also treats
 * `supportedInterfaces` as the v1.0 marker.
 *
 * For unsupported cards this module also explains *why*, for the shapes seen in the wild:
 * v0.2 cards (no protocolVersion, or "0.2.x", or a legacy `authentication` object), v1.0
 * intentions without supportedInterfaces, and a numeric protocolVersion.
 */
import type { Finding } from '../contract/types.js';
import { isObject, quote, type JsonObject } from '../lib/json.js';
import type { Generation } from './types.js';

/** "0.3" or a 0.3 patch version; the same rule as the v0.3 schema's protocolVersion pattern. */
export const V03_VERSION = /^0\.3(\.(0|[1-9][0-9]*))?$/;

export const ACCEPTED_VERSIONS_TEXT =
  'Accepted: A2A v1.0 cards (recognised by "supportedInterfaces") and A2A v0.3 cards (recognised by "protocolVersion": "0.3" or "0.3.x").';

const V10_SHAPE =
  '"supportedInterfaces": [{"url": "https://…", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]';

export type Detection =
  | { ok: true; generation: Generation }
  | { ok: false; message: string; errors: Finding[] };

/** Which generation the card is, or why it is none we accept. `card` must be an object. */
export function detectGeneration(card: JsonObject): Detection {
  if (Object.prototype.hasOwnProperty.call(card, 'supportedInterfaces')) return { ok: true, generation: '1.0' };
  const pv = card.protocolVersion;
  if (typeof pv === 'string' && V03_VERSION.test(pv)) return { ok: true, generation: '0.3' };
  return unsupported(card);
}

/** ["a", "b", "c"] -> '"a", "b" and "c"'. */
function listFields(fields: string[]): string {
  const q = fields.map((f) => `"${f}"`);
  return q.length <= 1 ? q.join('') : `${q.slice(0, -1).join(', ')} and ${q[q.length - 1]}`;
}

function unsupported(card: JsonObject): Detection & { ok: false } {
  const pv = card.protocolVersion;
  const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(card, k);
  const errors: Finding[] = [];
  let message: string;

  if (pv === undefined) {
    // v0.2.0-0.2.4 cards had no protocolVersion; a top-level url (or the v0.1/v0.2
    // `authentication` object) without it is the signature of such a card.
    const v02 = has('url') || isObject(card.authentication);
    if (v02) {
      message = `This looks like an A2A v0.2 agent card (it has no "protocolVersion" and no "supportedInterfaces"); v0.2 is not accepted. ${ACCEPTED_VERSIONS_TEXT}`;
      errors.push({
        path: '',
        rule: 'unsupported-version',
        message: 'A2A v0.2 card: neither "supportedInterfaces" (v1.0) nor "protocolVersion" "0.3.x" (v0.3) is present',
        hint:
          `Migrate to v1.0 (recommended): replace "url" with ${V10_SHAPE}` +
          (isObject(card.authentication) ? ' and declare "securitySchemes"/"securityRequirements" instead of "authentication"' : '') +
          '. Or, if the card already follows v0.3, add "protocolVersion": "0.3.0". Any other errors listed apply to both versions.',
      });
    } else {
      message = `The card declares no A2A protocol version: it has neither "supportedInterfaces" (A2A v1.0) nor "protocolVersion" (A2A v0.3). ${ACCEPTED_VERSIONS_TEXT}`;
      errors.push({
        path: '',
        rule: 'unsupported-version',
        message: 'neither "supportedInterfaces" nor "protocolVersion" is present, so the card is not an A2A v1.0 or v0.3 card',
        hint: `For A2A v1.0 add ${V10_SHAPE}. Any other errors listed apply to both versions.`,
      });
    }
  } else if (typeof pv !== 'string') {
    message = `"protocolVersion" must be a string, found ${quote(pv)}. ${ACCEPTED_VERSIONS_TEXT}`;
    errors.push({
      path: '/protocolVersion',
      rule: 'unsupported-version',
      message: `must be a string such as "0.3.0", found ${quote(pv)}`,
      hint: `A v1.0 card has no top-level "protocolVersion": remove it and add ${V10_SHAPE}.`,
    });
  } else if (/^v?1(\.|$)/.test(pv.trim())) {
    message = `"protocolVersion": ${quote(pv)} names A2A v1.0, but a v1.0 card is recognised by "supportedInterfaces", which this card lacks. ${ACCEPTED_VERSIONS_TEXT}`;
    errors.push({
      path: '/protocolVersion',
      rule: 'unsupported-version',
      message: `a v1.0 card has no top-level "protocolVersion" and must declare "supportedInterfaces"`,
      hint: `Remove ${listFields(['protocolVersion', 'url', 'preferredTransport', 'additionalInterfaces'].filter(has))}, and add ${V10_SHAPE}.`,
    });
  } else if (/^v?0\.[0-2](\.|$)/.test(pv.trim())) {
    message = `A2A ${pv.trim()} agent cards are not accepted. ${ACCEPTED_VERSIONS_TEXT}`;
    errors.push({
      path: '/protocolVersion',
      rule: 'unsupported-version',
      message: `A2A version ${quote(pv)} is not accepted`,
      hint: `Migrate to v1.0 (recommended): replace "url"/"preferredTransport"/"additionalInterfaces" with ${V10_SHAPE} and remove "protocolVersion". Or move to v0.3 by setting "protocolVersion": "0.3.0" and checking the card against v0.3.`,
    });
  } else {
    message = `Unsupported A2A protocol version ${quote(pv)}. ${ACCEPTED_VERSIONS_TEXT}`;
    errors.push({
      path: '/protocolVersion',
      rule: 'unsupported-version',
      message: `${quote(pv)} is not an accepted A2A version`,
      hint: `Use "protocolVersion": "0.3.0" for a v0.3 card, or remove it and add ${V10_SHAPE} for a v1.0 card.`,
    });
  }

  return { ok: false, message, errors };
}
