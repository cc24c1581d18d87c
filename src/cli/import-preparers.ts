/**
 * Where the import checks documents: on the main thread, or in a worker thread so that checking
 * (parsing, validation, signatures: about half of an import's CPU time) runs beside storing
 * (better-sqlite3 runs on the main thread) on a second core. Both give the same answers
 * (`prepareDocuments`); the worker is used only when the process may run on more than one core
 * (os.availableParallelism()), so on one core the import does not pay for the messages, and
 * only for an input that may be large (`threadFor`): a worker's start costs about 0.4 s of CPU
 * (its own copy of the modules and the checks), more than checking a small input takes.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { importChecksSettings, openImportChecks } from '../composition/import-checks.js';
import type { ImportConfig } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { holdsAtLeast, type SourceDocument } from './import-sources.js';
import { prepareDocuments, type Prepared } from './import-preparation.js';
import type { ImportWorkerData, ImportWorkerReply, ImportWorkerRequest } from './import-worker.js';

export interface Preparer {
  /** Answers are given in the order batches were handed in. */
  prepare(docs: SourceDocument[]): Promise<Prepared[]>;
  close(): Promise<void>;
}

export type Thread = 'worker' | 'main';

/**
 * Inputs of fewer documents and bytes than these are checked on the main thread. The worker's
 * start (about 0.4 s of CPU, as long before the first batch is checked) pays off once checking
 * on the main thread (~120-140 µs a document, accepted or refused, docs/scaling.md) would take
 * longer: from about 3,000 documents. Bytes stand for documents larger than most (2,000 cards of
 * 2 kB); either side of the line, the choice costs at most ~0.4 s.
 */
export const WORKER_MIN_DOCUMENTS = 2_000;
export const WORKER_MIN_BYTES = 4 * 1024 * 1024;

/**
 * Where an import of `files` (listSources') checks its documents: in a worker thread when more
 * than one core is available and the input may be large (holdsAtLeast: WORKER_MIN_DOCUMENTS or
 * WORKER_MIN_BYTES, or standard input or a named pipe, whose size is not known up front); on the
 * main thread otherwise.
 */
export async function threadFor(files: readonly string[], cores: number = availableParallelism()): Promise<Thread> {
  if (cores <= 1) return 'main';
  return (await holdsAtLeast(files, { documents: WORKER_MIN_DOCUMENTS, bytes: WORKER_MIN_BYTES })) ? 'worker' : 'main';
}

/** Checks in a worker thread or on the main thread, as `thread` says. */
export async function openPreparer(config: ImportConfig, log: Logger, thread: Thread): Promise<Preparer> {
  if (thread === 'worker') return WorkerPreparer.open(config);
  const opened = await openImportChecks(importChecksSettings(config), log);
  return {
    prepare: (docs) => prepareDocuments(opened.checks, docs),
    close: async () => opened.close(),
  };
}

class WorkerPreparer implements Preparer {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, { resolve(prepared: Prepared[]): void; reject(error: Error): void }>();
  #next = 0;
  /** Set once the thread failed or ended: every later request fails with it. */
  #broken: Error | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (reply: ImportWorkerReply) => {
      if (reply.type === 'prepared') this.#settle(reply.id, (w) => w.resolve(reply.prepared));
      else if (reply.type === 'failed' && reply.id !== undefined) this.#settle(reply.id, (w) => w.reject(new Error(reply.message)));
    });
    worker.on('error', (error) => this.#fail(error));
    worker.on('exit', () => this.#fail(new Error('the import worker thread ended')));
  }

  static async open(config: ImportConfig): Promise<WorkerPreparer> {
    const worker = new Worker(new URL('./import-worker.js', import.meta.url), { workerData: { settings: importChecksSettings(config) } satisfies ImportWorkerData });
    // Its checks are open (trust roots read) before the first batch goes in.
    await new Promise<void>((resolve, reject) => {
      const onReply = (reply: ImportWorkerReply): void => {
        worker.off('message', onReply);
        if (reply.type === 'open') resolve();
        else reject(new Error(reply.type === 'failed' ? reply.message : `unexpected ${reply.type}`));
      };
      worker.on('message', onReply);
      worker.once('error', reject);
    }).catch(async (error: unknown) => {
      await worker.terminate();
      throw error;
    });
    return new WorkerPreparer(worker);
  }

  prepare(docs: SourceDocument[]): Promise<Prepared[]> {
    if (this.#broken) return Promise.reject(this.#broken);
    const id = this.#next++;
    return new Promise<Prepared[]>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#worker.postMessage({ type: 'prepare', id, docs } satisfies ImportWorkerRequest);
    });
  }

  async close(): Promise<void> {
    if (!this.#broken) {
      const closed = new Promise<void>((resolve) => {
        this.#worker.on('message', (reply: ImportWorkerReply) => reply.type === 'closed' && resolve());
        this.#worker.once('exit', () => resolve());
      });
      this.#worker.postMessage({ type: 'close' } satisfies ImportWorkerRequest);
      await closed;
    }
    this.#broken ??= new Error('the import worker thread is closed');
    await this.#worker.terminate();
  }

  #settle(id: number, settle: (waiting: { resolve(prepared: Prepared[]): void; reject(error: Error): void }) => void): void {
    const waiting = this.#waiting.get(id);
    if (!waiting) return;
    this.#waiting.delete(id);
    settle(waiting);
  }

  #fail(error: Error): void {
    this.#broken ??= error;
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
  }
}
