/**
 * The migration step that brings entries stored before URLs were normalised under the rules of
 * lib/endpoint-url.ts, the same for both engines: each entry's identity URL is rewritten to its
 * normal form, and every URL of its current revision is claimed for its owner.
 *
 * Older entries may already disagree with the rules (two principals registered two spellings of
 * one URL): the entry whose primary URL it is keeps it, else the entry registered first; another
 * entry keeps its stored identity
 * unchanged and claims nothing it would take from another principal. Nothing is deleted: its
 * owner learns of the conflict on the next update, as anyone registering it now would.
 */
import { claimKey, endpointIdentity } from '../lib/endpoint-url.js';

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

type StoredInterface = { url: string; protocolBinding: string; tenant?: unknown };

/** The endpoints of a stored revision's `interfaces` column (with their tenants); a hand-edited row has none. */
function storedInterfaces(json: string): StoredInterface[] {
  try {
    const parsed: unknown = JSON.parse(json);
    if (Array.isArray(parsed)) {
      return parsed.filter((i): i is StoredInterface => typeof i?.url === 'string' && typeof i?.protocolBinding === 'string');
    }
  } catch {
    // A hand-edited row: it claims nothing.
  }
  return [];
}

/**
 * `entries` oldest first (by list position): earlier registrations win conflicts, except that an
 * entry whose primary URL a claim is wins it over entries that only list it (as a secondary
 * interface, or another scheme's spelling of it): otherwise an older entry that listed someone's
 * endpoint would take it from that endpoint's own, re-registered, entry.
 */
export function planUrlBackfill(entries: Iterable<BackfillEntry>): BackfillPlan {
  const plan: BackfillPlan = { identities: [], claims: [], entryUrls: [] };
  const identities = new Set<string>();
  const owners = new Map<string, string>();
  const rows = [...entries].map((e) => ({ ...e, identity: endpointIdentity(storedInterfaces(e.interfaces)) }));
  for (const e of rows) identities.add(`${e.kind} ${e.identityUrl}`);
  const claim = (url: string, owner: string) => {
    if (owners.has(url)) return;
    owners.set(url, owner);
    plan.claims.push({ url, owner });
  };
  for (const e of rows) if (e.identity.primary !== undefined) claim(claimKey(e.identity.primary), e.owner);
  for (const e of rows) {
    const identity = e.identity;
    if (identity.primary !== undefined && identity.primary !== e.identityUrl && !identities.has(`${e.kind} ${identity.primary}`)) {
      identities.delete(`${e.kind} ${e.identityUrl}`);
      identities.add(`${e.kind} ${identity.primary}`);
      plan.identities.push({ id: e.id, identityUrl: identity.primary });
    }
    for (const url of identity.claims) {
      claim(url, e.owner);
      if (owners.get(url) === e.owner) plan.entryUrls.push({ entryId: e.id, url });
    }
  }
  return plan;
}
