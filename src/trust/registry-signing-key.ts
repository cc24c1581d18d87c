/**
 * The registry's own signing key (REGISTRY_SIGNING_KEY: a private JWK file), read once at
 * start-up: the registry signs its agent card with it and publishes the public half at
 * /.well-known/jwks.json. A key that cannot sign stops start-up with the variable named.
 */
import fs from 'node:fs';
import type { JWK } from 'jose';
import { ACCEPTED_ALGORITHMS } from '../validation/signature.js';
import { parseSigningKey, publicJwk, type SigningKey } from './jwks.js';

export interface RegistrySigningKey extends SigningKey {
  /** The public half, as published. */
  publicJwk: JWK;
}

export async function loadRegistrySigningKey(file: string): Promise<RegistrySigningKey> {
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`REGISTRY_SIGNING_KEY: cannot read a JSON Web Key from ${file}: ${(error as Error).message}`);
  }
  let key: SigningKey;
  try {
    key = await parseSigningKey(value, file, ACCEPTED_ALGORITHMS);
  } catch (error) {
    throw new Error(`REGISTRY_SIGNING_KEY: ${(error as Error).message}`);
  }
  // Published without the private key's key_ops ["sign"] and ext (publicJwk): so, no verifier could use it.
  return { ...key, publicJwk: { ...publicJwk(key.jwk), use: 'sig' } };
}
