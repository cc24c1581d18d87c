/**
 * Putting a restore's checked copy in the database's place (./backup.ts), so that no crash leaves
 * the registry starting empty. The swap is several renames (the database and its -wal, -shm and
 * damage record moved aside as `registry.db.replaced-<time>`, then the copy renamed to
 * `registry.db`): a SIGKILL or a power loss between them left no registry.db, and the next start
 * began an empty registry without a word (a missing file is a new registry's), removing the
 * restore's copy as a leftover. The window cannot be closed by ordering alone: an old -wal beside
 * the new file would be replayed into it, and a new file beside no -wal would lose the old one's
 * last commits if the copy went away first.
 *
 * So the restore first writes a record of the swap (`registry.db.restore-unfinished`: the copy,
 * the name the replaced database goes to, the backup), synced, and removes it only once the swap
 * is synced. Every step of the swap can be taken again from the record, and is taken by whoever
 * holds the database's process lock next: the registry starting finishes it (and says so), as
 * does the next restore; an import or `a2a-registry check`, which do not hold that lock, refuse
 * and say how it is finished.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DAMAGE_RECORD_SUFFIX } from './damage-record.js';
import { syncPath } from './sync-path.js';

/** Appended to the database file's name: the record of a swap under way. */
export const RESTORE_RECORD_SUFFIX = '.restore-unfinished';

/** The files of a database that move aside with it (a -wal or -shm must never meet another database). */
const MOVED_WITH_DATABASE = ['', '-wal', '-shm', DAMAGE_RECORD_SUFFIX] as const;

export interface RestoreSwap {
  /** The checked, synced copy that goes into the database's place. */
  copy: string;
  /** Where the database it replaces goes (with its -wal, -shm and damage record), if there is one. */
  replaced?: string;
  /** The backup the copy was made from (for the operator's messages). */
  backup: string;
}

/** What finishing an earlier restore did. */
export interface FinishedRestore {
  /** The swap's record, removed (unless not `finished`). */
  record: string;
  /** The swap it recorded; undefined when the record was cut short, before the swap began (nothing had moved). */
  swap?: RestoreSwap;
  /** False when its copy was gone and no database in place: the replaced one gathered under its replaced name, the record kept. */
  finished: boolean;
}

export const restoreRecordFile = (database: string): string => `${database}${RESTORE_RECORD_SUFFIX}`;

/**
 * Puts `swap.copy` in place of `database`: the record first (synced, with its folder), then the
 * renames (synced), then the record removed (synced). A crash anywhere leaves either the record
 * with everything needed to finish, or the swap done.
 */
export function swapIntoPlace(database: string, swap: RestoreSwap): void {
  const record = restoreRecordFile(database);
  const dir = path.dirname(database);
  // Names relative to the folder: a data directory moved (or mounted elsewhere) after a crash is still finished.
  const text = JSON.stringify({ copy: path.basename(swap.copy), replaced: swap.replaced ? path.basename(swap.replaced) : null, backup: swap.backup, at: new Date().toISOString() });
  // flush: on disk before any file moves (a record cut short by a crash is one of a swap that never began).
  // 0644: names alone, no secret; readable by the registry's user when the restore ran as root.
  fs.writeFileSync(record, text, { mode: 0o644, flush: true });
  syncPath(dir, 'r');
  try {
    completeSwap(database, swap, record);
  } catch (err) {
    // Refused before anything moved (the database's own rename: a file mounted on its own, EBUSY):
    // the swap never began, so its record goes. Kept, it had every start, import and `check`
    // refuse an untouched database as "stopped half way", and the next restore failing the same way.
    if (fs.existsSync(swap.copy) && !movedAside(swap)) {
      fs.rmSync(record, { force: true });
      syncPath(dir, 'r');
      throw new SwapNotBegun(err);
    }
    throw err;
  }
}

/** A swap refused at its first step: the database and its files are as they were, no record left. */
export class SwapNotBegun extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** Whether any of the replaced database's files has reached its replaced name. */
function movedAside(swap: RestoreSwap): boolean {
  const replaced = swap.replaced;
  return replaced !== undefined && MOVED_WITH_DATABASE.some((suffix) => fs.existsSync(`${replaced}${suffix}`));
}

/** The swap's remaining steps, each one skipped when already taken. */
function completeSwap(database: string, swap: RestoreSwap, record: string): void {
  if (fs.existsSync(swap.copy)) {
    // While the copy is not in place, what sits at the database's names is the replaced database's (or a stray -wal's).
    moveAside(database, swap);
    // A -wal or -shm without their database (left by hand, or a crash) must not meet the restored one, nor a damage record.
    for (const suffix of MOVED_WITH_DATABASE) if (suffix !== '') fs.rmSync(`${database}${suffix}`, { force: true });
    fs.renameSync(swap.copy, database);
  }
  syncPath(path.dirname(database), 'r');
  fs.rmSync(record, { force: true });
  syncPath(path.dirname(database), 'r');
}

/** The replaced database's files still at the database's names, moved to its replaced name. */
function moveAside(database: string, swap: RestoreSwap): void {
  if (!swap.replaced) return;
  // The database first, its log after: a -wal moved before its database left it without its last commits.
  for (const suffix of MOVED_WITH_DATABASE) {
    if (fs.existsSync(`${database}${suffix}`)) fs.renameSync(`${database}${suffix}`, `${swap.replaced}${suffix}`);
  }
}

/** The swap an earlier restore recorded and did not finish, or undefined; `unreadable` when its record is no record. */
export function unfinishedRestore(database: string): RestoreSwap | 'unreadable' | undefined {
  let text: string;
  try {
    text = fs.readFileSync(restoreRecordFile(database), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const dir = path.dirname(database);
  try {
    const parsed = JSON.parse(text) as { copy?: unknown; replaced?: unknown; backup?: unknown };
    if (typeof parsed.copy !== 'string' || typeof parsed.backup !== 'string' || (parsed.replaced !== null && typeof parsed.replaced !== 'string')) return 'unreadable';
    // A name, never a path: the record is not a way to rename files elsewhere.
    if ([parsed.copy, parsed.replaced].some((name) => typeof name === 'string' && path.basename(name) !== name)) return 'unreadable';
    return { copy: path.join(dir, parsed.copy), ...(typeof parsed.replaced === 'string' ? { replaced: path.join(dir, parsed.replaced) } : {}), backup: parsed.backup };
  } catch {
    return 'unreadable';
  }
}

/**
 * Finishes the swap an earlier restore into `database` recorded and did not finish (killed, a
 * power loss), holding the database's process lock; returns what it did, or undefined when there
 * was none. Its copy gone (removed by hand), the replaced database's files are gathered under its
 * replaced name all the same, and `finished` is false: the caller says what to do, never starting
 * on an empty file.
 */
export function finishUnfinishedRestore(database: string): FinishedRestore | undefined {
  const record = restoreRecordFile(database);
  const swap = unfinishedRestore(database);
  if (swap === undefined) return undefined;
  if (swap === 'unreadable') {
    // Written and synced before any file moves: a record that is not whole was cut short before the swap began.
    fs.rmSync(record, { force: true });
    return { record, finished: true };
  }
  try {
    // No copy but a database: the copy was put in place (the record's removal was what remained), or removed by hand before anything moved.
    if (fs.existsSync(swap.copy) || fs.existsSync(database)) {
      completeSwap(database, swap, record);
      return { record, swap, finished: true };
    }
    moveAside(database, swap);
    syncPath(path.dirname(database), 'r');
    return { record, swap, finished: false };
  } catch (err) {
    // A rename refused again (what stopped the restore: a file mounted on its own, permissions, a
    // full disk): "could not start: EBUSY: rename ..." said neither which restore nor what to do.
    throw new Error(
      `a restore of ${swap.backup} into ${database} stopped half way (${record} records it), and finishing it failed: ${(err as Error).message}. ` +
        'Fix that, then start the registry or run the restore again: either finishes it',
      { cause: err },
    );
  }
}

/** What an operator is told of a restore that stopped half way and cannot be finished (its copy gone). */
export function unfinishableRestore(database: string, swap: RestoreSwap, record: string): string {
  const kept = swap.replaced && fs.existsSync(swap.replaced) ? swap.replaced : undefined;
  const back = kept
    ? MOVED_WITH_DATABASE.filter((suffix) => fs.existsSync(`${kept}${suffix}`)).map((suffix) => `mv ${kept}${suffix} ${database}${suffix}`)
    : [];
  return (
    `a restore of ${swap.backup} into ${database} stopped half way (${record} records it), and its copy ${swap.copy} is gone, so it cannot be finished; ` +
    `there is no database at ${database}, and starting would begin an empty registry. ` +
    `Restore again (a2a-registry restore --force ${swap.backup})` +
    (back.length > 0 ? `, or undo it: ${back.join('; ')}; rm ${record}` : `, or remove ${record} to start with an empty registry on purpose`) +
    '.'
  );
}

/** What an import or a check (which do not finish a restore: no process lock) say of one under way. */
export function restoreUnderWay(database: string): string | undefined {
  const swap = unfinishedRestore(database);
  if (swap === undefined) return undefined;
  const what = swap === 'unreadable' ? 'a restore' : `a restore of ${swap.backup}`;
  return (
    `${what} into ${database} stopped half way (${restoreRecordFile(database)} records it): the database there may be the replaced one, or none. ` +
    'Start the registry (it finishes the restore as it starts, and says so) or run the restore again, then try again'
  );
}
