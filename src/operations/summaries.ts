/** Short texts for people, beside each answer's data part. */
import type { EntryView, ErrorBody, Finding, ListPage, RegistrationResult, SearchHit, ValidationResultBody, WatchEvent } from '../contract/types.js';
import { verifyingKeyText } from '../contract/verification.js';
import { MORE_FINDINGS } from '../contract/findings.js';
import { noMatchesText, totalText } from '../lib/total-text.js';

const MAX_LISTED = 10;

function findingLines(label: string, findings: Finding[]): string[] {
  if (findings.length === 0) return [];
  const lines = findings.slice(0, MAX_LISTED).map((f) => `  ${f.path || '/'}: ${f.message}${f.hint ? ` (${f.hint})` : ''}`);
  if (findings.length > MAX_LISTED) lines.push(`  … and ${findings.length - MAX_LISTED} more`);
  return [`${label}:`, ...lines];
}

/**
 * A refusal's findings as people read them under its message, alike on every door (the A2A task's
 * text, the MCP tool error's): `- /path: message (hint: ...)`, the first ten and how many more. The
 * A2A text listed five and dropped the rest unsaid, where MCP listed ten and said how many more.
 */
export function refusalLines(findings: readonly Finding[]): string[] {
  const line = (f: Finding) => `- ${f.path || '/'}: ${f.message}${f.hint ? ` (hint: ${f.hint})` : ''}`;
  // The finding that counts those a refusal left out (contract/findings.ts) is said last, as it is:
  // counted among "N more" it made 20 findings left out one (`- … and 11 more` of 30).
  const counted = findings.at(-1)?.rule === MORE_FINDINGS ? findings.at(-1) : undefined;
  const listed = counted ? findings.slice(0, -1) : findings;
  const lines = listed.slice(0, MAX_LISTED).map(line);
  if (listed.length > MAX_LISTED) lines.push(`- … and ${listed.length - MAX_LISTED} more`);
  if (counted) lines.push(line(counted));
  return lines;
}

/** A refusal for people: `CODE: message`, then its findings (refusalLines). */
export const refusalText = (error: ErrorBody): string => [`${error.code}: ${error.message}`, ...refusalLines(error.details ?? [])].join('\n');

export function summarizeRegistration(r: RegistrationResult): string {
  const what = r.kind === 'agent' ? `agent (A2A ${r.protocolVersion})` : 'MCP server';
  const verb = r.created ? 'Registered' : r.changed ? 'Updated' : 'Unchanged:';
  const counted = r.indexed && 'skills' in r.indexed ? `${r.indexed.skills} skill(s)` : `${r.indexed && 'tools' in r.indexed ? r.indexed.tools : 0} tool(s)`;
  const verdict = r.verified ? ` Signature verified (${verifyingKeyText(r.kid, r.jwks)}).` : r.signatures?.length ? ' Not verified: no signature is by a key this registry trusts.' : '';
  const head = `${verb} ${what} ${r.id}, revision ${r.revision}${r.revisionOrigin === 'refresh' && r.changed ? ' (from a refresh)' : ''}; ${counted} indexed.${verdict}`;
  const fetched = r.source ? [`Fetched from ${r.source.url}; the registry refreshes it from there.`] : [];
  return [head, ...fetched, ...findingLines('Warnings', r.warnings)].join('\n');
}

export function summarizeValidation(v: ValidationResultBody): string {
  const what = v.kind === 'agent' ? `A2A ${v.protocolVersion ?? '?'} agent card` : 'MCP toolspec';
  const head = v.valid
    ? `Valid ${what} (${v.sizeBytes} bytes).`
    : `Invalid ${what}: ${v.errors.length} error(s).`;
  return [head, ...findingLines('Errors', v.errors), ...findingLines('Warnings', v.warnings)].join('\n');
}

export function summarizeEntry(e: EntryView): string {
  const where = e.interfaces.map((i) => `${i.protocolBinding} ${i.url}`).join(', ');
  // An older revision (get with a revision) says so, and its health and drift are the entry's
  // now (drift compares the live card with the current revision), not that revision's.
  const current = e.revisions?.[0]?.revision;
  const older = current !== undefined && current !== e.revision;
  const drift = e.drift ? (older ? `, live card differs from revision ${current}` : ', live card differs') : '';
  const health = e.health ? `; ${older ? 'the entry now: ' : ''}health ${e.health.status} since ${e.health.since}${drift}` : '';
  const revision = `revision ${e.revision}${older ? ` (not the current one: the entry is at revision ${current})` : ''}`;
  return `${e.kind} "${e.name}" (${e.id}), ${revision}, owner ${e.owner}, updated ${e.updatedAt}; ${where}${health}`;
}

export function summarizeEntries(page: ListPage): string {
  if (page.entries.length === 0) return 'No entries.';
  const lines = page.entries.map((e) => `- ${e.name} [${e.kind}] ${e.id} rev ${e.revision}`);
  if (page.nextPageToken) lines.push('(more: pass nextPageToken)');
  return lines.join('\n');
}

/** A readable list of hits; `total` is given on the last chunk (or the whole page), with why nothing matched when known. */
export function describeHits(hits: SearchHit[], total: number | undefined, offset: number, exact = true, reason?: string): string {
  const lines = hits.map((h, i) => {
    const inner = h.match.type === 'skill' || h.match.type === 'tool' ? ` — ${h.match.type} "${h.match.name}"` : '';
    const url = h.interfaces[0]?.url ?? '';
    return `${offset + i + 1}. ${h.name} [${h.kind}]${inner} (${h.match.fields.join(', ')}) ${url}`;
  });
  if (total !== undefined) lines.push(total === 0 ? noMatchesText(reason) : `${totalText(total, exact)} match(es) in all.`);
  return lines.join('\n');
}

/** One line per watch event. */
export function describeWatchEvent(e: WatchEvent): string {
  switch (e.event) {
    case 'added':
      return `Added: ${e.hit.kind} "${e.hit.name}" (${e.hit.id}) now matches.`;
    case 'updated':
      return `Updated: ${e.hit.kind} "${e.hit.name}" (${e.hit.id}) changed and still matches.`;
    case 'removed':
      return `Removed: ${e.hit.kind ?? 'entry'} ${e.hit.name ? `"${e.hit.name}" ` : ''}(${e.hit.id}) no longer matches.`;
    case 'resync':
      return `Resync: events were missed; these are the current matches.\n${describeHits(e.results, e.total, 0)}`;
  }
}
