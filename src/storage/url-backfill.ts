/**
 * The migration step that brings entries stored before URLs were normalised under the rules of
 * lib/endpoint-url.ts, the same for both engines: each entry's identity URL is rewritten to its
 * normal form, and every URL of its current revision is claimed for its owner.
 *
 * Older entries may already disagree with the rules (two principals registered two spellings of
 * one URL): the entry registered first keeps the URL; a later entry keeps its stored identity
 * unchanged and claims nothing it would take from another principal. Nothing is deleted: its
 * owner learns of the conflict on the next update, as anyone registering it now would.
 */
import { endpointIdentity } from '../lib/endpoint-url.js';

export interface BackfillEntry {
  id: string;
  kind: string;
  owner: string;
  identityUrl: string;
  /** The current revision's `interfaces` column (JSON). */
  interfaces: string;
}

export interface BackfillPlan {
  identities: { id: string; identityUrl: string }[];
  claims: { url: string; owner: string }[];
  entryUrls: { entryId: string; url: string }[];
}

/** `entries` oldest first (by list position): earlier registrations win conflicts. */
export function planUrlBackfill(entries: Iterable<BackfillEntry>): BackfillPlan {
  const plan: BackfillPlan = { identities: [], claims: [], entryUrls: [] };
  const identities = new Set<string>();
  const owners = new Map<string, string>();
  const rows = [...entries];
  for (const e of rows) identities.add(`${e.kind} ${e.identityUrl}`);
  for (const e of rows) {
    let interfaces: { url: string; protocolBinding: string }[] = [];
    try {
      const parsed: unknown = JSON.parse(e.interfaces);
      if (Array.isArray(parsed)) {
        interfaces = parsed.filter((i): i is { url: string; protocolBinding: string } => typeof i?.url === 'string' && typeof i?.protocolBinding === 'string');
      }
    } catch {
      // A hand-edited row: it claims nothing.
    }
    const identity = endpointIdentity(interfaces);
    if (identity.primary !== undefined && identity.primary !== e.identityUrl && !identities.has(`${e.kind} ${identity.primary}`)) {
      identities.delete(`${e.kind} ${e.identityUrl}`);
      identities.add(`${e.kind} ${identity.primary}`);
      plan.identities.push({ id: e.id, identityUrl: identity.primary });
    }
    for (const url of identity.claims) {
      const owner = owners.get(url);
      if (owner === undefined) {
        owners.set(url, e.owner);
        plan.claims.push({ url, owner: e.owner });
      } else if (owner !== e.owner) {
        continue;
      }
      plan.entryUrls.push({ entryId: e.id, url });
    }
  }
  return plan;
}
