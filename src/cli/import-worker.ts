/**
 * The import's checking thread (see import-preparers.ts): builds its own validator and trust
 * roots from the settings it is given and answers each batch of documents with what
 * `prepareDocuments` makes of them, so the main thread stores one batch while this one checks
 * the next.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openImportChecks, type ImportChecksSettings } from '../composition/import-checks.js';
import { createLogger } from '../observability/logger.js';
import type { SourceDocument } from './import-sources.js';
import { prepareDocuments, type Prepared } from './import-preparation.js';

export interface ImportWorkerData {
  settings: ImportChecksSettings;
}
export type ImportWorkerRequest = { type: 'prepare'; id: number; docs: SourceDocument[] } | { type: 'close' };
export type ImportWorkerReply =
  | { type: 'open' }
  | { type: 'prepared'; id: number; prepared: Prepared[] }
  /** An unexpected error (not a refusal): the import stops. */
  | { type: 'failed'; id?: number; message: string }
  | { type: 'closed' };

const port = parentPort!;
const reply = (message: ImportWorkerReply): void => port.postMessage(message);

try {
  const opened = await openImportChecks((workerData as ImportWorkerData).settings, createLogger('warn', process.stderr));
  port.on('message', (request: ImportWorkerRequest) => {
    if (request.type === 'close') {
      opened.close();
      reply({ type: 'closed' });
      port.close();
      return;
    }
    prepareDocuments(opened.checks, request.docs).then(
      (prepared) => reply({ type: 'prepared', id: request.id, prepared }),
      (error: unknown) => reply({ type: 'failed', id: request.id, message: error instanceof Error ? error.message : String(error) }),
    );
  });
  reply({ type: 'open' });
} catch (error) {
  reply({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
}
