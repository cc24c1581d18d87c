/**
 * Option values of the key commands (`keygen`, `sign`) that would otherwise make keys or
 * signatures every registry refuses: checked when the command line is read, as usage errors.
 */
import { InvalidArgumentError } from 'commander';

/**
 * A key id: signatures name their key by it, and a registry does not trust a key without one
 * nor accept a signature without one, so an empty (or blank) kid is a mistake, not a choice.
 */
export function keyId(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty: signatures name their key by it (leave --kid out to use the key\'s thumbprint)');
  return value;
}

/** A JWKS URL for a signature's `jku`: absolute http(s), without credentials (what a verifier could fetch). */
export function jwksUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be the absolute https URL of your public JWKS, e.g. https://agent.example.com/.well-known/jwks.json');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new InvalidArgumentError(`must be an http(s) URL, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username || url.password) throw new InvalidArgumentError('must not carry a user name or password');
  return value;
}
