/**
 * The process a background integrity check runs in (./integrity-process.ts): checks the file its
 * parent names, sends the report back, and exits. At a lower CPU priority, so that serving keeps
 * the CPU it needs while the whole file is read.
 */
import os from 'node:os';
import { checkIntegrity, type IntegrityCheckKind, type IntegrityReport } from './integrity.js';

export type IntegrityChildReply = { report: IntegrityReport } | { error: string; code?: string };

const [file, check] = process.argv.slice(2) as [string, IntegrityCheckKind];
try {
  os.setPriority(10);
} catch {
  // not allowed here (a container without the capability): the check runs at the usual priority
}
let reply: IntegrityChildReply;
try {
  reply = { report: checkIntegrity(file, check) };
} catch (error) {
  const code = (error as { code?: unknown }).code;
  reply = { error: (error as Error).message, ...(typeof code === 'string' ? { code } : {}) };
}
process.send!(reply, () => process.exit(0));
