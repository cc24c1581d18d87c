/**
 * The registry's own A2A v1.0 card: read from agent-card.json at the top of the package, with
 * `{PUBLIC_URL}` made absolute at start-up and its security requirements fitted to the access
 * policy. The well-known endpoint serves it to v1.0 clients and its legacy-compatible superset
 * (protocol/legacy-card.ts) to v0.3 clients.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CardInterface } from '../composition/door.js';

/** The package root: the nearest folder above this module with package.json (src/ or dist/src/). */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return `${dir}${path.sep}`;
}

export const AGENT_CARD_FILE = `${packageRoot()}agent-card.json`;
export const PACKAGE_JSON_FILE = `${packageRoot()}package.json`;

export interface CardOptions {
  /** REGISTRY_PUBLIC_READ: anonymous callers may read. */
  publicRead: boolean;
  /** Interfaces of doors that are on (gRPC), after the file's own: the first interface is the one clients prefer. */
  extraInterfaces?: readonly CardInterface[];
}

/**
 * The card as wire JSON, with PUBLIC_URL substituted and the version checked against package.json.
 * agent-card.json requires the bearer scheme at the top level, so clients that attach
 * credentials by the card (python a2a-sdk's auth interceptor) send their token on every call;
 * when reads are public an empty requirement is added as the alternative ("or no credentials",
 * as in OpenAPI), which tells clients that anonymous reads are allowed.
 */
export function loadAgentCardJson(publicUrl: string, options: CardOptions = { publicRead: true }): Record<string, unknown> {
  const text = fs.readFileSync(AGENT_CARD_FILE, 'utf8').replaceAll('{PUBLIC_URL}', publicUrl);
  const card = JSON.parse(text) as Record<string, unknown> & { supportedInterfaces: CardInterface[] };
  card.supportedInterfaces.push(...(options.extraInterfaces ?? []));
  const pkg = JSON.parse(fs.readFileSync(PACKAGE_JSON_FILE, 'utf8')) as { version: string };
  if (card.version !== pkg.version) {
    throw new Error(`agent-card.json has version ${String(card.version)} but package.json has ${pkg.version}; keep them equal.`);
  }
  if (options.publicRead && Array.isArray(card.securityRequirements)) card.securityRequirements.push({ schemes: {} });
  return card;
}
