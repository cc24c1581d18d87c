/**
 * The thread a backup's or a restore's copy runs in (./backup.ts): one job from workerData, its
 * outcome posted back. A BackupError crosses as its message and whether it is a usage error.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BackupError, checkedCopy, copyBackup, copyLiveDatabase, type CopyFacts } from './backup-steps.js';

export type BackupJob =
  | { kind: 'backup'; source: string; tmp: string; destination: string }
  | { kind: 'check'; backup: string }
  | { kind: 'restore'; backup: string; tmp: string; current?: string };

export type BackupJobReply = { ok: true; facts?: CopyFacts } | { ok: false; message: string; usage?: boolean; code?: string };

function run(job: BackupJob): CopyFacts | undefined {
  switch (job.kind) {
    case 'backup':
      return copyLiveDatabase(job.source, job.tmp, job.destination);
    case 'check':
      return checkedCopy(job.backup);
    case 'restore':
      copyBackup(job.backup, job.tmp, job.current);
      return undefined;
  }
}

let reply: BackupJobReply;
try {
  const facts = run(workerData as BackupJob);
  reply = { ok: true, ...(facts ? { facts } : {}) };
} catch (err) {
  const error = err as NodeJS.ErrnoException;
  reply = err instanceof BackupError ? { ok: false, message: err.message, usage: err.usage } : { ok: false, message: error.message, ...(error.code ? { code: error.code } : {}) };
}
parentPort!.postMessage(reply);
