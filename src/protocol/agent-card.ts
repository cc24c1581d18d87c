/**
 * The registry's own A2A v1.0 card: read from agent-card.json at the top of the package, with
 * `{PUBLIC_URL}` made absolute at start-up. The same document is served to every client
 * (the well-known card is always v1.0; legacy peers find the 0.3 JSONRPC interface in it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: the nearest folder above this module with package.json (src/ or dist/src/). */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return `${dir}${path.sep}`;
}

export const AGENT_CARD_FILE = `${packageRoot()}agent-card.json`;
export const PACKAGE_JSON_FILE = `${packageRoot()}package.json`;

/** The card as wire JSON, with PUBLIC_URL substituted and the version taken from package.json. */
export function loadAgentCardJson(publicUrl: string): Record<string, unknown> {
  const text = fs.readFileSync(AGENT_CARD_FILE, 'utf8').replaceAll('{PUBLIC_URL}', publicUrl);
  const card = JSON.parse(text) as Record<string, unknown>;
  const pkg = JSON.parse(fs.readFileSync(PACKAGE_JSON_FILE, 'utf8')) as { version: string };
  if (card.version !== pkg.version) {
    throw new Error(`agent-card.json has version ${String(card.version)} but package.json has ${pkg.version}; keep them equal.`);
  }
  return card;
}
