/**
 * The endpoints a registration claims for its owner: every endpoint URL of the document that is a
 * URL, with its tenant, as a claim key (lib/endpoint-url.ts), with where it sits in the document;
 * and the refusal when another principal holds one.
 */
import { RegistryError } from '../contract/errors.js';
import type { Subject } from '../contract/subject.js';
import { claimKey, shownEndpoint, shownEndpointKey, splitTenant, withTenant } from '../lib/endpoint-url.js';
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

/** What `key` adds to `heldAs`, a claim covering it (lib/endpoint-url.ts coveringClaims). */
function addedTo(key: string, heldAs: string): { query: boolean; tenant: boolean } {
  const [k, h] = [splitTenant(key), splitTenant(heldAs)];
  return { query: k.url.includes('?') && !h.url.includes('?'), tenant: k.tenant !== undefined && h.tenant === undefined };
}

/** "a query string", "a tenant" or both. */
function addedText(added: { query: boolean; tenant: boolean }): string {
  return [added.query ? 'a query string' : '', added.tenant ? 'a tenant' : ''].filter(Boolean).join(' and ');
}

/** An endpoint key another principal holds, or holds without its query or tenant (`heldAs`), as people read it in a message. */
export function shownTakenKey(key: string, heldAs: string | undefined): string {
  return heldAs === undefined ? shownEndpointKey(key) : `${shownEndpointKey(key)} (${shownEndpointKey(heldAs)} under ${addedText(addedTo(key, heldAs))})`;
}

/**
 * FORBIDDEN for a claim another principal holds (`heldAs`: the claim covering `url` it holds, the
 * URL without its query or tenant): names the URLs as this document wrote them, never that principal.
 */
export function urlTaken(claims: EndpointClaims, url: string, heldAs?: string): RegistryError {
  const uses = claims.claimed.filter((e) => e.claim === url);
  const shown = uses[0] ? shownEndpoint(uses[0].url, uses[0].tenant) : shownEndpointKey(url);
  if (heldAs !== undefined) {
    const added = addedTo(url, heldAs);
    // The held URL as this document wrote it: its query (and fragment) or tenant left out.
    const heldOf = (e: ClaimedEndpoint) => shownEndpoint(added.query ? e.url.replace(/[?#].*$/s, '') : e.url, added.tenant ? undefined : e.tenant);
    const held = uses[0] ? heldOf(uses[0]) : shownEndpointKey(heldAs);
    const under = addedText(added);
    return new RegistryError(
      'FORBIDDEN',
      `${shown} is ${held} under ${under}, and ${held} is already used by an entry of another principal: whoever lists a URL holds it under every query string and tenant, since an agent that does not route by them ignores them. List only endpoints that are yours.`,
      uses.map((e) => ({
        path: e.path,
        rule: 'url-taken',
        message: `${shownEndpoint(quote(e.url), e.tenant)} is ${heldOf(e)} under ${under}, which belongs to an entry of another principal`,
        hint: `Remove it, or register from the principal that owns ${heldOf(e)}.`,
      })),
    );
  }
  return new RegistryError(
    'FORBIDDEN',
    `${shown} is already used by an entry of another principal: a URL can belong to the entries of one principal only. List only endpoints that are yours.`,
    uses.map((e) => ({
      path: e.path,
      rule: 'url-taken',
      message: `${shownEndpoint(quote(e.url), e.tenant)} belongs to an entry of another principal`,
      hint: 'Remove it, or register from the principal that owns that endpoint.',
    })),
  );
}
