/**
 * The thread a backup's or a restore's copy runs in (./backup.ts): one job from workerData, its
 * outcome posted back. A BackupError crosses as its message and whether it is a usage error.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BackupError, checkedCopy, copyBackup, copyLiveDatabase, type CopyFacts, type RestoredCopy } from './backup-steps.js';

export type BackupJob =
  | { kind: 'backup'; source: string; tmp: string; destination: string }
  | { kind: 'check'; backup: string }
  | { kind: 'restore'; backup: string; tmp: string; current?: string };

export type BackupJobReply = { ok: true; facts?: CopyFacts; restored?: RestoredCopy } | { ok: false; message: string; usage?: boolean; code?: string };

function run(job: BackupJob): Omit<BackupJobReply & { ok: true }, 'ok'> {
  switch (job.kind) {
    case 'backup':
      return { facts: copyLiveDatabase(job.source, job.tmp, job.destination) };
    case 'check':
      return { facts: checkedCopy(job.backup) };
    case 'restore':
      return { restored: copyBackup(job.backup, job.tmp, job.current) };
  }
}

let reply: BackupJobReply;
try {
  reply = { ok: true, ...run(workerData as BackupJob) };
} catch (err) {
  const error = err as NodeJS.ErrnoException;
  reply = err instanceof BackupError ? { ok: false, message: err.message, usage: err.usage } : { ok: false, message: error.message, ...(error.code ? { code: error.code } : {}) };
}
parentPort!.postMessage(reply);
