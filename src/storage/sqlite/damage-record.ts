/**
 * The damage found in a SQLite database file, remembered beside it (registry.db.damaged). A store
 * that finds its file damaged stops checkpointing its write-ahead log into it and keeps the log
 * at shutdown; without a record, a registry restarted on the same file knew nothing until its
 * integrity check (a minute after the index loads, more at a million entries), and meanwhile its
 * first background checkpoint (250 ms after a write) or its connections closing folded the kept
 * log into the damaged file: the separate copy of the last acknowledged writes was gone. With
 * the record a restart knows at once (a stat at open, whatever the file's size): writes and
 * checkpoints refused, /readyz saying so, from its first second.
 *
 * The record names the file by device and inode: one replaced since (moved aside, restored by
 * hand, deleted) is not the damaged one, and its record is dropped. `a2a-registry restore` moves
 * it aside with the file it describes.
 */
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { syncPath } from './sync-path.js';

/** Appended to the database file's name. */
export const DAMAGE_RECORD_SUFFIX = '.damaged';

export interface DamageRecord {
  /** The database file it was found in, and its device and inode then. */
  file: string;
  dev: number;
  ino: number;
  /** ISO-8601: when it was found. */
  foundAt: string;
  /** What was found, as the store's fault says it (SQLite's check or code). */
  code: string;
  message: string;
}

export const damageRecordFile = (database: string): string => `${database}${DAMAGE_RECORD_SUFFIX}`;

/**
 * Writes the record (a temporary file renamed over it, fsynced with its folder: it must outlive a
 * power loss as the log does). Throws what the file system says when it cannot.
 */
export function recordDamage(database: string, found: { foundAt: string; code: string; message: string }): void {
  const { dev, ino } = statSync(database);
  const record: DamageRecord = { file: database, dev, ino, ...found };
  const target = damageRecordFile(database);
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    // flush: fsynced before the rename puts it in place.
    writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600, flush: true });
    renameSync(tmp, target);
  } finally {
    rmSync(tmp, { force: true });
  }
  syncPath(dirname(target), 'r');
}

/**
 * The record of `database`'s damage: 'none'; 'stale' for one naming another file than the one at
 * `database` now (replaced or gone: the operator's repair), or one that cannot be read as a
 * record (it is set aside by the caller, and says so); else the record.
 */
export function readDamageRecord(database: string): { state: 'none' } | { state: 'stale'; why: string } | { state: 'damaged'; record: DamageRecord } {
  let text: string;
  try {
    text = readFileSync(damageRecordFile(database), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'none' };
    throw error;
  }
  let record: Partial<DamageRecord>;
  try {
    record = JSON.parse(text) as Partial<DamageRecord>;
  } catch {
    return { state: 'stale', why: 'it is not a damage record (not JSON)' };
  }
  if (typeof record.dev !== 'number' || typeof record.ino !== 'number' || typeof record.foundAt !== 'string') return { state: 'stale', why: 'it is not a damage record (no device, inode and time)' };
  const now = statSync(database, { throwIfNoEntry: false });
  if (!now) return { state: 'stale', why: 'the file it names is gone' };
  if (now.dev !== record.dev || now.ino !== record.ino) return { state: 'stale', why: 'the file it names was replaced since' };
  return { state: 'damaged', record: { file: database, dev: record.dev, ino: record.ino, foundAt: record.foundAt, code: String(record.code ?? 'CORRUPT'), message: String(record.message ?? '') } };
}

export function removeDamageRecord(database: string): void {
  rmSync(damageRecordFile(database), { force: true });
}
