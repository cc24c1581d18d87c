/** Helpers for the freshness tests (issue 16): cards served by test origins, entries made due. */
import { createHash } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { OriginServer } from './origin-server.js';

/** Serves `card` at <base>/.well-known/agent-card.json, pretty-printed, with an ETag honoured on If-None-Match. */
export function serveCard(origin: OriginServer, card: unknown, base: string, headers: Record<string, string> = {}): string {
  const text = `${JSON.stringify(card, null, 2)}\n`;
  const etag = `"${createHash('sha256').update(text).digest('hex').slice(0, 16)}"`;
  origin.route(`${base}/.well-known/agent-card.json`, (req, res) => {
    if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
    res.writeHead(200, { 'content-type': 'application/json', etag, ...headers }).end(text);
  });
  return text;
}

/** Makes entries of the SQLite registry in `dataDir` due now, as if their interval had passed. */
export function makeDue(dataDir: string, ...ids: string[]): void {
  const db = new Database(path.join(dataDir, 'registry.db'));
  try {
    const stmt = db.prepare(`UPDATE entry_freshness SET next_check_at = '2000-01-01T00:00:00.000Z' WHERE entry_id = ?`);
    for (const id of ids) stmt.run(id);
  } finally {
    db.close();
  }
}

/** When the SQLite registry in `dataDir` checks the entry next (undefined: never by itself). */
export function nextCheckAt(dataDir: string, id: string): string | undefined {
  const db = new Database(path.join(dataDir, 'registry.db'), { readonly: true });
  try {
    const row = db.prepare('SELECT next_check_at AS at FROM entry_freshness WHERE entry_id = ?').get(id) as { at: string | null } | undefined;
    return row?.at ?? undefined;
  } finally {
    db.close();
  }
}

/**
 * Gives a stopped or running SQLite registry's entry another stored identity URL, as an earlier
 * release may have stored one it no longer accepts (an unfilled template, "{BASE_URL}/a2a").
 */
export function setStoredIdentity(dataDir: string, id: string, identityUrl: string): void {
  const db = new Database(path.join(dataDir, 'registry.db'));
  try {
    db.prepare('UPDATE entries SET identity_url = ? WHERE id = ?').run(identityUrl, id);
  } finally {
    db.close();
  }
}
