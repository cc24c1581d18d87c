/**
 * How one check moves an entry's health: the status it found, since when that status holds,
 * and how many checks in a row have failed. Pure, so every path (registration by URL, refresh,
 * probe, the `refresh` operation) counts the same way.
 */
import type { EntryHealth, HealthStatus } from '../contract/freshness.js';

export interface CheckFinding {
  status: HealthStatus;
  /** Failed checks: the machine-readable reason and the message. */
  reason?: string;
  message?: string;
}

export function nextHealth(previous: EntryHealth | undefined, finding: CheckFinding, now: string): EntryHealth {
  const failing = finding.status !== 'ok';
  const health: EntryHealth = {
    status: finding.status,
    checkedAt: now,
    since: previous?.status === finding.status ? previous.since : now,
    failures: failing ? (previous && previous.status !== 'ok' ? previous.failures : 0) + 1 : 0,
  };
  if (failing && finding.reason) health.reason = finding.reason;
  // Messages are bounded: they are shown on every entry and hit.
  if (failing && finding.message) health.message = finding.message.length > 500 ? `${finding.message.slice(0, 497)}...` : finding.message;
  return health;
}
