/**
 * How one check moves an entry's health: the status it found, since when that status holds,
 * how many checks in a row have failed and since when they have (a run of failures goes on
 * through a change of kind, invalid to unreachable and back: only an `ok` ends it). Pure, so
 * every path (registration by URL, refresh, probe, the `refresh` operation) counts the same way.
 */
import { failingSince, type EntryHealth, type HealthStatus } from '../contract/freshness.js';

export interface CheckFinding {
  status: HealthStatus;
  /** Failed checks: the machine-readable reason and the message. */
  reason?: string;
  message?: string;
}

export function nextHealth(previous: EntryHealth | undefined, finding: CheckFinding, now: string): EntryHealth {
  const failing = finding.status !== 'ok';
  const wasFailing = previous !== undefined && previous.status !== 'ok';
  const health: EntryHealth = {
    status: finding.status,
    checkedAt: now,
    since: previous?.status === finding.status ? previous.since : now,
    failures: failing ? (wasFailing ? previous.failures : 0) + 1 : 0,
  };
  if (failing) health.failingSince = wasFailing ? failingSince(previous) : now;
  if (failing && finding.reason) health.reason = finding.reason;
  // Messages are bounded: they are shown on every entry and hit.
  if (failing && finding.message) health.message = finding.message.length > 500 ? `${finding.message.slice(0, 497)}...` : finding.message;
  return health;
}
