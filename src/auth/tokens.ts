/**
 * Bearer-token authentication, shared by every door. Tokens map to principals
 * (REGISTRY_TOKENS); the principal named `admin` is an administrator. With no tokens
 * configured, the first start generates an admin token in the data directory (mode 0600), so
 * a local user can register at once and a deployment is never open by accident.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ADMIN_PRINCIPAL, MIN_TOKEN_CHARS, unpresentableToken } from '../config/config.js';
import type { Caller } from '../contract/caller.js';
import { ADMIN_TOKEN_FILE } from './admin-token-file.js';
import { makeDirectories } from '../lib/make-directories.js';
import { thisProcessUser, whyCannotWrite } from '../lib/write-access.js';

/**
 * Loads the admin token from the data directory, creating it on first start.
 *
 * The file is written whole or not at all (a temporary file, synced, then linked into place), so
 * a first start stopped half-way (a full disk, a crash) leaves no empty file behind. An empty one
 * left by an older version is replaced; a token too short to be safe, written by someone, is an
 * error that says what to do (it is never overwritten: someone may rely on it).
 */
export function ensureAdminToken(dataDir: string): { token: string; file: string; created: boolean } {
  const file = path.join(dataDir, ADMIN_TOKEN_FILE);
  try {
    return loadOrCreate(dataDir, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === undefined) throw err;
    // The file system's words (EACCES, EEXIST on mkdir) name neither the setting nor the way out.
    const why = whyCannotWrite(file);
    throw new Error(
      `cannot keep the admin token in ${file} (${(err as Error).message})${why ? `: ${why}` : ''}. Check that REGISTRY_DATA_DIR (${dataDir}) is a directory ` +
        `that ${thisProcessUser()} can write to, or give the token with REGISTRY_ADMIN_TOKEN or REGISTRY_ADMIN_TOKEN_FILE.`,
      { cause: err },
    );
  }
}

function loadOrCreate(dataDir: string, file: string): { token: string; file: string; created: boolean } {
  makeDirectories(dataDir, 0o700);
  // Two processes starting on one directory at once: the second adopts the first one's token.
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = readTokenFile(file);
    // The rule REGISTRY_ADMIN_TOKEN_FILE's token is held to: a token with a space inside was taken,
    // and no Authorization header could carry it (the admin shut out).
    const unpresentable = existing ? unpresentableToken(existing) : undefined;
    if (unpresentable) {
      throw new Error(`the admin token in ${file} ${unpresentable}, or delete the file and the registry generates one.`);
    }
    if (existing !== undefined && existing.length >= MIN_TOKEN_CHARS) return { token: existing, file, created: false };
    if (existing !== undefined && existing.length > 0) {
      throw new Error(
        `${file} holds an admin token of ${existing.length} characters; tokens need at least ${MIN_TOKEN_CHARS}. Write a longer one into it, or delete the file and the registry generates one.`,
      );
    }
    const token = `a2ar_${randomBytes(24).toString('base64url')}`;
    if (placeTokenFile(file, `${token}\n`, existing === undefined)) return { token, file, created: true };
  }
  throw new Error(`${file} keeps changing while the registry starts; check what else writes to ${dataDir}.`);
}

/** The file's token (trimmed; '' for an empty file), or undefined when there is no file. */
function readTokenFile(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Writes `text` to `file` (mode 0600) whole: into a temporary file, synced, then linked into
 * place when there is no file (false when another process placed one meanwhile) or renamed over
 * the empty one.
 */
function placeTokenFile(file: string, text: string, create: boolean): boolean {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = fs.openSync(temporary, 'wx', 0o600);
  try {
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    if (!create) {
      fs.renameSync(temporary, file);
      return true;
    }
    fs.linkSync(temporary, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
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

  /**
   * Whether some token still names `principal`. Tokens change only with the configuration (a
   * restart): what a principal started before (a watch) is checked against this when it runs again.
   */
  hasPrincipal(principal: string): boolean {
    return this.digests.some((candidate) => candidate.principal === principal);
  }

  /**
   * The caller an Authorization header value makes (without an address: the door adds it).
   * Undefined is no header: anonymous. A header that came is a credential, an empty one (or only
   * spaces, which HTTP trims to empty) included: no bearer token is an invalid one, never
   * anonymous (an empty header was served as anonymous, while "Bearer" alone was refused).
   */
  callerFor(authorization: string | undefined): Caller {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) return { isAdmin: false, invalidCredential: authorization !== undefined };
    const principal = this.principalOf(match[1]!);
    if (principal === undefined) return { isAdmin: false, invalidCredential: true };
    return { principal, isAdmin: principal === ADMIN_PRINCIPAL };
  }
}

/** One-shot (every request with a token pays it): about half of createHash().update().digest(). */
const sha256 = (s: string): Buffer => hash('sha256', s, 'buffer');
