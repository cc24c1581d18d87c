/**
 * The search index saved beside the data (issue 22): at start-up the registry loads the saved
 * index and replays the change log after its position instead of re-indexing every entry; it
 * saves the index every few minutes when something changed, and at shutdown.
 *
 * The saved position must never be ahead of the index: a change the index has not applied yet
 * would be skipped at the next start. So the position is read first, then, after a pause in
 * which every change committed before the read has been published (a write publishes right
 * after it is acknowledged), the index is copied. With PostgreSQL it is also no further than the
 * follower has applied. With SQLite it is also no further than the first change this process has
 * not acknowledged yet (committed, its fsync still running: a pause does not bound a slow disk)
 * and the first change another process wrote (`a2a-registry import` beside the running registry,
 * whose changes this index has not applied: the next start replays them). Replaying a change twice is harmless, so
 * erring early costs a little replay, never a lost change.
 *
 * Not used with hybrid ranking (the index cannot save its embeddings): the index is rebuilt.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../observability/logger.js';
import { LOADABLE_SNAPSHOT_FORMATS, SNAPSHOT_FORMAT, readIndexSnapshot, removeAbandonedWrites, writeIndexSnapshot, type SnapshotMeta } from '../search/snapshot-file.js';
import { StorageUnavailableError } from '../storage/faults.js';
import type { RegistryStore } from '../storage/types.js';
import type { ChangeFeed } from './change-feed.js';
import type { RegistryService } from './service.js';
import { makeDirectories } from '../lib/make-directories.js';

export const SNAPSHOT_FILE = 'search-index.snapshot';
/** Wait between reading the change-log position and copying the index (see above). */
const SETTLE_MS = 200;

export interface IndexSnapshotOptions {
  dir: string;
  /** Saves this often when something changed; 0: only at shutdown. */
  intervalMs: number;
  /** The registry's version: a file written by another one is not loaded. */
  version: string;
}

/**
 * Makes the directory the index is saved in (0700) and checks it can be written: a path that
 * cannot be one (a file, a read-only place) stops start-up naming the setting, instead of every
 * save failing with a bare EEXIST or EACCES and every start re-indexing every entry.
 */
export function prepareSnapshotDir(dir: string): void {
  try {
    makeDirectories(dir, 0o700);
    fs.accessSync(dir, fs.constants.W_OK);
  } catch (error) {
    throw new Error(
      `REGISTRY_INDEX_SNAPSHOT_DIR (by default REGISTRY_DATA_DIR): ${dir} cannot hold the saved search index (${(error as Error).message}); name a directory the registry can write, or set REGISTRY_INDEX_SNAPSHOT_SECONDS=0 to not save the index`,
    );
  }
}

/**
 * A failed save as a log line's fields. The file system refusing it (ENOSPC, EROFS, EACCES,
 * EISDIR...) or storage unavailable is no bug: its message and code, without a stack, as other
 * storage faults are logged (a full disk logged a stack trace at every save). Anything else whole.
 */
export function saveFailure(err: unknown): { err: unknown; code?: string } {
  if (err instanceof StorageUnavailableError) return { err: err.message, code: err.fault.code };
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (err instanceof Error && typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)) return { err: err.message, code };
  return { err };
}

export class IndexSnapshots {
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> | undefined;
  /** The feed's version at the last save (nothing changed since: nothing to save). */
  private savedAt = -1;
  /** How far the PostgreSQL follower has applied the change log, once it runs. */
  private appliedThrough: (() => number) | undefined;
  /** The file holds this database's index: loaded at start-up, or saved since. */
  private fileIsOurs = false;

  constructor(
    private readonly store: RegistryStore,
    private readonly service: RegistryService,
    private readonly feed: ChangeFeed,
    private readonly log: Logger,
    private readonly options: IndexSnapshotOptions,
  ) {}

  get file(): string {
    return path.join(this.options.dir, SNAPSHOT_FILE);
  }

  /**
   * Loads the saved index and replays the change log after it. Returns the position reached,
   * or undefined when there is no usable snapshot (logged with the reason): rebuild instead.
   */
  async restore(signal: AbortSignal): Promise<number | undefined> {
    const started = Date.now();
    // What a save cut short by a crash left (before this process saves: nothing of its own yet).
    const abandoned = await removeAbandonedWrites(this.file);
    if (abandoned.removed.length > 0) {
      this.log.info({ files: abandoned.removed, bytes: abandoned.bytes }, 'removed the temporary files of search index saves a crash cut short');
    }
    let readMs = 0;
    let meta: SnapshotMeta | undefined;
    const restored = await this.service.restoreIndex(async () => {
      const last = await this.store.lastChangeSeq();
      const trimmed = await this.store.changesTrimmedThrough();
      const read = await readIndexSnapshot(this.file, async (m: SnapshotMeta) => {
        if (!LOADABLE_SNAPSHOT_FORMATS.includes(m.format) || m.version !== this.options.version) return `it was written by another version (${m.version}, format ${m.format})`;
        if (m.seq > last) return `its position ${m.seq} is ahead of the change log (${last}): another database's, or a restored backup`;
        if (m.seq < trimmed) return `the change log was trimmed through ${trimmed}, past its position ${m.seq}`;
        // Trimmed through exactly its position, the change there is gone, nothing to compare it
        // with: the log's last change, trimmed after a quiet spell longer than the log is kept
        // (every restart then re-indexed every entry, logged as another database's). The replay
        // and the entry count below still check it.
        if (m.seq !== trimmed && m.mark !== (await this.store.changeMark(m.seq))) return `the change log holds another change at its position ${m.seq}: another database's, or a restored backup`;
        return undefined;
      });
      readMs = Date.now() - started;
      if (!read.ok) return { reason: read.reason };
      meta = read.meta;
      return { state: read.state, seq: read.meta.seq };
    }, { signal });
    if ('reason' in restored) {
      this.log.info({ file: this.file, reason: restored.reason }, `no saved search index used (${restored.reason}): indexing every entry`);
      return undefined;
    }
    this.fileIsOurs = true;
    // Changes replayed make the saved one stale: save again at the next chance.
    if (restored.seq === meta?.seq) this.savedAt = this.feed.version;
    this.log.info(
      { file: this.file, entries: meta?.entries, from: meta?.seq, at: restored.seq, readMs, ms: Date.now() - started },
      'search index loaded from its snapshot and the change log',
    );
    return restored.seq;
  }

  /**
   * Saves every `intervalMs` from now on. `from`: the position the index was loaded at;
   * `appliedThrough` bounds the position (PostgreSQL follower).
   */
  start(from: number, appliedThrough?: () => number): void {
    this.store.ownChanges?.startAt(from);
    this.appliedThrough = appliedThrough;
    if (this.options.intervalMs > 0) {
      this.timer = setInterval(() => {
        void this.saveIfChanged().catch((err: unknown) => this.log.warn(saveFailure(err), 'saving the search index failed; will retry'));
      }, this.options.intervalMs).unref();
    }
  }

  /** Saves the index unless the saved one is current (nothing changed since, or just restored). */
  async saveIfChanged(): Promise<void> {
    if (this.feed.version !== this.savedAt) await this.save();
  }

  /** Saves the index now (a save in progress is joined); nothing when it cannot be saved. */
  save(): Promise<void> {
    this.saving ??= this.write().finally(() => {
      this.saving = undefined;
    });
    return this.saving;
  }

  /** Stops saving periodically, then saves once more when something changed (shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.saving?.catch(() => undefined);
    await this.saveIfChanged();
  }

  /**
   * Without a follower, how far (up to `read`) the change log holds only this process's own
   * changes, which the index has applied (see OwnChanges.publishedThrough); a change another
   * process wrote stops it there.
   */
  private async ownChangesThrough(read: number): Promise<number> {
    const walked = await this.store.ownChanges?.publishedThrough(read, this.store);
    if (!walked) return read;
    if (walked.foreign !== undefined) {
      this.log.info(
        { at: walked.at, foreign: walked.foreign },
        'the change log holds changes the index has not applied (another process wrote them, e.g. an import): the next start replays them from the saved index',
      );
    }
    return walked.at;
  }

  private async write(): Promise<void> {
    // An empty index is rebuilt in no time: a registry whose index holds nothing (a fresh data
    // directory, a replica's first start on an empty database, every entry deleted) writes no file.
    // One it loaded or saved held entries deleted since: it is removed, so it never outlives them.
    // Any other is left as it is (another database's, a damaged one): it may be the last trace of
    // data this database lost (an emptied registry.db: ../composition/emptied-database.ts), and the
    // first save of an index that holds something replaces it.
    if (this.service.indexSize === 0) {
      const version = this.feed.version;
      if (this.fileIsOurs) {
        await fs.promises.rm(this.file, { force: true });
        this.fileIsOurs = false;
        this.log.info({ file: this.file }, 'search index snapshot removed: the index holds no entry');
      }
      this.savedAt = version;
      return;
    }
    const started = Date.now();
    const read = await this.store.lastChangeSeq();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const seq = Math.min(read, this.appliedThrough?.() ?? (await this.ownChangesThrough(read)));
    const mark = await this.store.changeMark(seq);
    const version = this.feed.version;
    const saved = this.service.captureIndex();
    if (!saved) return;
    const entries = this.service.indexSize;
    const copiedMs = Date.now() - started - SETTLE_MS;
    let bytes: number;
    try {
      ({ bytes } = await writeIndexSnapshot(
        this.file,
        { format: SNAPSHOT_FORMAT, version: this.options.version, seq, entries, savedAt: new Date().toISOString(), ...(mark === undefined ? {} : { mark }) },
        saved.parts,
      ));
    } finally {
      saved.release();
    }
    this.savedAt = version;
    this.fileIsOurs = true;
    this.log.info({ file: this.file, entries, seq, bytes, copyMs: copiedMs, ms: Date.now() - started }, 'search index saved');
  }
}
