/**
 * Prepared statements, compiled once per connection: the write path runs a handful of fixed
 * statements thousands of times, and compiling one costs about as much as running it.
 * Keyed by the connection (weakly), so a reopened store never uses a closed handle's statements.
 */
import type Database from 'better-sqlite3';

const caches = new WeakMap<Database.Database, Map<string, Database.Statement>>();

export function prepare(db: Database.Database, sql: string): Database.Statement {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  let statement = cache.get(sql);
  if (!statement) cache.set(sql, (statement = db.prepare(sql)));
  return statement;
}
