/**
 * The endpoints a registration claims for its owner: every endpoint URL of the document that is a
 * URL, with its tenant, as a claim key (lib/endpoint-url.ts), with where it sits in the document;
 * and the refusal when another principal holds one.
 */
import { RegistryError } from '../contract/errors.js';
import type { Subject } from '../contract/subject.js';
import { claimKey, shownEndpoint, shownEndpointKey, withTenant } from '../lib/endpoint-url.js';
import { isObject, quote } from '../lib/json.js';
import { cardEndpointUrls, checkEndpointUrl, checkedEndpoints, mcpEndpointUrls, type CheckedEndpoint } from '../validation/endpoint-urls.js';
import type { Verdict } from '../validation/index.js';

/** An endpoint URL of a document with its normal form and claim key. */
export interface ClaimedEndpoint extends CheckedEndpoint {
  claim: string;
}

export interface EndpointClaims {
  /** The key of the primary endpoint (its normal form and tenant); for a placeholder that is no URL, `fallbackIdentity`. */
  identityUrl: string;
  /** Whether `identityUrl` is the key of a checked URL (a normal form), not the fallback. */
  identityIsUrl: boolean;
  claimed: ClaimedEndpoint[];
  /** The claim keys, once each, sorted (EntryWrite.urls). */
  urls: string[];
}

/** The endpoints of a valid document, each checked (undefined: not a URL), in document order. */
function checkedEndpointsOf(subject: Subject, verdict: Verdict): readonly (CheckedEndpoint | undefined)[] {
  // Validation records them for what it accepts: each is a URL, checked once.
  const recorded = checkedEndpoints(verdict);
  if (recorded) return recorded;
  const all =
    subject.type === 'agent-card'
      ? isObject(subject.card)
        ? cardEndpointUrls(subject.card, verdict.generation ?? '1.0')
        : []
      : mcpEndpointUrls(subject.server);
  return all.map((e) => {
    const check = checkEndpointUrl(e);
    return check.ok === true ? { ...e, normalized: check.normalized } : undefined;
  });
}

/** The claims of a valid document. */
export function endpointClaims(subject: Subject, verdict: Verdict, fallbackIdentity: string): EndpointClaims {
  const claimed: ClaimedEndpoint[] = [];
  let identityUrl = fallbackIdentity;
  let identityIsUrl = false;
  checkedEndpointsOf(subject, verdict).forEach((e, i) => {
    if (e === undefined) return;
    const key = withTenant(e.normalized, e.tenant);
    if (i === 0) [identityUrl, identityIsUrl] = [key, true];
    claimed.push({ ...e, claim: claimKey(key) });
  });
  return { identityUrl, identityIsUrl, claimed, urls: [...new Set(claimed.map((e) => e.claim))].sort() };
}

/** Where the document uses its identity URL (the primary interface or server URL, and any repeat of it). */
export function identityUses(claims: EndpointClaims): ClaimedEndpoint[] {
  const claim = claimKey(claims.identityUrl);
  return claims.claimed.filter((e) => e.claim === claim);
}

/**
 * How a refusal shows a claim another principal holds: the endpoint as this document wrote it
 * (`shown`), what of it is held (`held`: the URL without its query string, which is no ownership
 * boundary, and without its tenant when the holder holds the URL under every tenant) and what
 * `held` was written under ("a query string", "a tenant", both, or "" when it is the URL itself).
 */
interface TakenEndpoint {
  shown: string;
  held: string;
  under: string;
}

/** The taken claim `url` (covered by `heldAs`, when given) as written at `use`, or as a key when the document has no use of it. */
function takenEndpoint(use: ClaimedEndpoint | undefined, url: string, heldAs: string | undefined): TakenEndpoint {
  const tenantAdded = heldAs !== undefined;
  if (use === undefined) {
    const shown = shownEndpointKey(url);
    return heldAs === undefined ? { shown, held: shown, under: '' } : { shown, held: shownEndpointKey(heldAs), under: 'a tenant' };
  }
  // A normal form has a '?' only where its query starts (a path's is %3F).
  const queryAdded = use.normalized.includes('?');
  const under = [queryAdded ? 'a query string' : '', tenantAdded ? 'a tenant' : ''].filter(Boolean).join(' and ');
  // Its query (and fragment, which never reaches the server) left out as written.
  const held = shownEndpoint(queryAdded ? use.url.replace(/[?#].*$/s, '') : use.url, tenantAdded ? undefined : use.tenant);
  return { shown: shownEndpoint(use.url, use.tenant), held, under };
}

/** An endpoint another principal holds, as the document wrote it, with what is held when that differs (a refresh's health says it). */
export function shownTakenEndpoint(claims: EndpointClaims, url: string, heldAs: string | undefined): string {
  const taken = takenEndpoint(claims.claimed.find((e) => e.claim === url), url, heldAs);
  return taken.under === '' ? taken.shown : `${taken.shown} (${taken.held} under ${taken.under})`;
}

/** Told to whoever tries to share a URL with another principal by a query string. */
const TENANTS_NOT_QUERIES = "Agents of several principals behind one URL are told apart by each interface's `tenant` (A2A v1.0), not by a query string.";

/**
 * FORBIDDEN for a claim another principal holds (`heldAs`: the claim covering `url` it holds, the
 * URL without its tenant): names the URLs as this document wrote them, never that principal.
 */
export function urlTaken(claims: EndpointClaims, url: string, heldAs?: string): RegistryError {
  const uses = claims.claimed.filter((e) => e.claim === url);
  const first = takenEndpoint(uses[0], url, heldAs);
  // Under a tenant, the URL is held under every tenant: another tenant would not help.
  const hint = (held: string) => `Remove it, or register from the principal that owns ${held}.${heldAs === undefined ? ` ${TENANTS_NOT_QUERIES}` : ''}`;
  const message =
    first.under === ''
      ? `${first.shown} is already used by an entry of another principal: a URL can belong to the entries of one principal only, whatever query string it carries. List only endpoints that are yours.`
      : `${first.shown} is ${first.held} under ${first.under}, and ${first.held} is already used by an entry of another principal: a URL belongs to one principal under every query string (a server may ignore it), and a URL held without a tenant under every tenant too. List only endpoints that are yours.`;
  return new RegistryError(
    'FORBIDDEN',
    message,
    uses.map((e) => {
      const taken = takenEndpoint(e, url, heldAs);
      return {
        path: e.path,
        rule: 'url-taken',
        message:
          taken.under === ''
            ? `${shownEndpoint(quote(e.url), e.tenant)} belongs to an entry of another principal`
            : `${shownEndpoint(quote(e.url), e.tenant)} is ${taken.held} under ${taken.under}, which belongs to an entry of another principal`,
        hint: hint(taken.under === '' ? 'that endpoint' : taken.held),
      };
    }),
  );
}
