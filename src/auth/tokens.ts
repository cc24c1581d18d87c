/**
 * Bearer-token authentication, shared by every door. Tokens map to principals
 * (REGISTRY_TOKENS); the principal named `admin` is an administrator. With no tokens
 * configured, the first start generates an admin token in the data directory (mode 0600), so
 * a local user can register at once and a deployment is never open by accident.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ADMIN_PRINCIPAL } from '../config/config.js';
import type { Caller } from '../contract/caller.js';

export const ADMIN_TOKEN_FILE = 'admin-token';

/** Loads the admin token from the data directory, creating it on first start. */
export function ensureAdminToken(dataDir: string): { token: string; file: string; created: boolean } {
  const file = path.join(dataDir, ADMIN_TOKEN_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    const token = fs.readFileSync(file, 'utf8').trim();
    if (token.length >= 16) return { token, file, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const token = `a2ar_${randomBytes(24).toString('base64url')}`;
  // wx: never overwrite a token another process wrote a moment ago.
  try {
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return ensureAdminToken(dataDir);
    throw err;
  }
  return { token, file, created: true };
}

/** Resolves tokens to principals in constant time per candidate (no early exit on prefix). */
export class TokenAuthenticator {
  private readonly digests: { digest: Buffer; principal: string }[];

  constructor(tokens: Map<string, string>) {
    this.digests = [...tokens].map(([token, principal]) => ({ digest: sha256(token), principal }));
  }

  principalOf(token: string): string | undefined {
    const digest = sha256(token);
    let found: string | undefined;
    for (const candidate of this.digests) if (timingSafeEqual(candidate.digest, digest)) found = candidate.principal;
    return found;
  }

  /** The caller an Authorization header value makes (without an address: the door adds it). */
  callerFor(authorization: string | undefined): Caller {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) return { isAdmin: false, invalidCredential: authorization !== undefined && authorization !== '' };
    const principal = this.principalOf(match[1]!);
    if (principal === undefined) return { isAdmin: false, invalidCredential: true };
    return { principal, isAdmin: principal === ADMIN_PRINCIPAL };
  }
}

/** One-shot (every request with a token pays it): about half of createHash().update().digest(). */
const sha256 = (s: string): Buffer => hash('sha256', s, 'buffer');
