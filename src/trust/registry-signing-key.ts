/**
 * The registry's own signing key (REGISTRY_SIGNING_KEY: a private JWK file), read once at
 * start-up: the registry signs its agent card with it and publishes the public half at
 * /.well-known/jwks.json. A key that cannot sign stops start-up as invalid configuration, naming
 * the variable and the file (config/setting-files.ts).
 */
import type { JWK } from 'jose';
import { parseSettingFile, readSettingJson } from '../config/setting-files.js';
import { ACCEPTED_ALGORITHMS } from '../validation/signature.js';
import { parseSigningKey, publicJwk, type SigningKey } from './jwks.js';

export interface RegistrySigningKey extends SigningKey {
  /** The public half, as published. */
  publicJwk: JWK;
}

export async function loadRegistrySigningKey(file: string): Promise<RegistrySigningKey> {
  const value = readSettingJson('REGISTRY_SIGNING_KEY', file);
  const key = await parseSettingFile('REGISTRY_SIGNING_KEY', file, () => parseSigningKey(value, file, ACCEPTED_ALGORITHMS));
  // Published without the private key's key_ops ["sign"] and ext (publicJwk): so, no verifier could use it.
  return { ...key, publicJwk: { ...publicJwk(key.jwk), use: 'sig' } };
}
