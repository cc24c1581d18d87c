/**
 * The registry's own signing key (REGISTRY_SIGNING_KEY: a private JWK file), read once at
 * start-up: the registry signs its agent card with it and publishes the public half at
 * /.well-known/jwks.json. A key that cannot sign stops start-up as invalid configuration, naming
 * the variable and the file (config/setting-files.ts).
 *
 * Beside it, the public keys it signed with before (REGISTRY_RETIRED_SIGNING_KEYS: a JWKS file),
 * each until its optional "exp": copies of the card signed by a retired key, which clients and
 * peer registries hold, keep verifying against the published set while they are replaced, instead
 * of all failing the moment the operator changes the key.
 */
import type { JWK } from 'jose';
import { parseSettingFile, parseSettingFileSync, readSettingJson } from '../config/setting-files.js';
import { isObject, quote } from '../lib/json.js';
import type { Logger } from '../observability/logger.js';
import { ACCEPTED_ALGORITHMS } from '../validation/signature.js';
import { holdsPrivateMembers, parseJwks, parseSigningKey, publicJwk, type SigningKey } from './jwks.js';

/** A public key the registry signed with before, published until `expiresAt`. */
export interface RetiredKey {
  jwk: JWK;
  /** When it stops being published (ms since the epoch: its JWK's "exp", in seconds), if ever. */
  expiresAt?: number;
}

export interface RegistrySigningKey extends SigningKey {
  /** The public half, as published. */
  publicJwk: JWK;
  /** Keys it signed with before, published beside it (REGISTRY_RETIRED_SIGNING_KEYS). */
  retired: RetiredKey[];
}

/**
 * The registry's signing key (REGISTRY_SIGNING_KEY) and its retired keys (`retiredFile`). A
 * retired key already past its "exp" is never published (tellExpiredRetiredKeys says so).
 */
export async function loadRegistrySigningKey(file: string, retiredFile?: string): Promise<RegistrySigningKey> {
  const value = readSettingJson('REGISTRY_SIGNING_KEY', file);
  const key = await parseSettingFile('REGISTRY_SIGNING_KEY', file, () => parseSigningKey(value, file, ACCEPTED_ALGORITHMS));
  const retired = retiredFile === undefined ? [] : loadRetiredKeys(retiredFile, key.kid);
  // Published without the private key's key_ops ["sign"] and ext (publicJwk): so, no verifier could use it.
  return { ...key, publicJwk: { ...publicJwk(key.jwk), use: 'sig' }, retired };
}

/**
 * Tells `log` of each retired key (of `retiredFile`) already past its "exp", which is not
 * published, naming its kid and when it expired: an operator who finds it missing from the JWKS
 * knows why. Said apart from loading it: a start loads the key before it has a log (composition/start-checks.ts).
 */
export function tellExpiredRetiredKeys(key: RegistrySigningKey, retiredFile: string | undefined, log: Pick<Logger, 'warn'>): void {
  const now = Date.now();
  for (const { jwk, expiresAt } of key.retired) {
    if (expiresAt === undefined || expiresAt > now) continue;
    const expired = new Date(expiresAt).toISOString();
    log.warn(
      { file: retiredFile, kid: jwk.kid, expiredAt: expired },
      `REGISTRY_RETIRED_SIGNING_KEYS: the key with kid ${quote(jwk.kid)} expired at ${expired} (its "exp"), so it is not published; copies of the card it signed no longer verify. Remove it from ${retiredFile}, or give it a later "exp" to publish it again`,
    );
  }
}

/**
 * The retired keys of a JWKS file. Refused whole (invalid configuration) when a key holds private
 * members (a retired private key has no business in a published set, nor lying beside it), is no
 * key a verifier could use, shares its kid with the current key or another retired key (a
 * signature names its key by kid), or has an "exp" that is no time.
 */
function loadRetiredKeys(file: string, currentKid: string): RetiredKey[] {
  const value = readSettingJson('REGISTRY_RETIRED_SIGNING_KEYS', file);
  return parseSettingFileSync('REGISTRY_RETIRED_SIGNING_KEYS', file, () => {
    if (isObject(value) && Array.isArray(value.keys)) {
      value.keys.forEach((k: unknown, i) => {
        if (isObject(k) && holdsPrivateMembers(k)) {
          throw new Error(`keys[${i}] holds private key material: it would be published. List only the public half (the --jwks file a2a-registry keygen wrote holds it)`);
        }
      });
    }
    const { keys, problems } = parseJwks(value, file);
    if (problems.length > 0) throw new Error(`${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`);
    const kids = new Set([currentKid]);
    return keys.map(({ kid, jwk }, i): RetiredKey => {
      if (kids.has(kid)) {
        const whose = kid === currentKid ? 'the current key (REGISTRY_SIGNING_KEY)' : 'another retired key';
        throw new Error(`keys[${i}] has kid ${quote(kid)}, as ${whose} has: signatures name their key by kid, so each key needs its own`);
      }
      kids.add(kid);
      const exp = (jwk as { exp?: unknown }).exp;
      if (exp === undefined) return { jwk };
      if (typeof exp !== 'number' || !Number.isSafeInteger(exp) || exp <= 0) {
        throw new Error(`keys[${i}] (kid ${quote(kid)}) has "exp" ${quote(exp)}, which is no time: give the seconds since 1970-01-01 UTC until which it is published (as a JWT's "exp", e.g. 1798761600 for 2027-01-01), or leave "exp" out`);
      }
      return { jwk, expiresAt: exp * 1000 };
    });
  });
}

/**
 * The keys /.well-known/jwks.json publishes at `now`: the current key, then each retired key
 * before its "exp"; and when that set changes next (the earliest "exp" still to come), if ever.
 */
export function publishedKeys(key: RegistrySigningKey, now: number): { keys: JWK[]; changesAt?: number } {
  const live = key.retired.filter((r) => r.expiresAt === undefined || r.expiresAt > now);
  const expiries = live.flatMap((r) => (r.expiresAt === undefined ? [] : [r.expiresAt]));
  return { keys: [key.publicJwk, ...live.map((r) => r.jwk)], ...(expiries.length > 0 ? { changesAt: Math.min(...expiries) } : {}) };
}
