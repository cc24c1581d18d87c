/**
 * The registry's own endpoints (the interfaces its card lists, at PUBLIC_URL, and the gRPC one),
 * reserved for admins. Any token holder could register the registry's own card (it is served to
 * anyone): listed as "A2A Agent Registry", owned by them, with the registry's URLs, after which no
 * one else could register it (its URLs were theirs). A non-admin registration, a refresh of a
 * non-admin's entry, or an admin's update of one (the entry stays its owner's, its URLs claimed
 * in the owner's name), whose document lists one of them is refused as a taken URL is: FORBIDDEN
 * with the path of each use, in every spelling the identity rules treat as the same (claim keys:
 * http or https, a default port named, a query string, a tenant under the URL).
 */
import { RegistryError } from '../contract/errors.js';
import type { Finding } from '../contract/types.js';
import { claimsToCheck, endpointIdentity, shownEndpoint } from '../lib/endpoint-url.js';
import { quote } from '../lib/json.js';
import type { ClaimedEndpoint, EndpointClaims } from './endpoint-claims.js';

/** The rule of a refusal for a reserved endpoint (details, and a refresh's health reason). */
export const URL_RESERVED = 'url-reserved';

export class ReservedEndpoints {
  #claims = new Set<string>();

  /** Reserves the endpoints of the registry's own card (its `supportedInterfaces`). */
  reserve(interfaces: readonly { url: string; protocolBinding: string; tenant?: unknown }[]): void {
    this.#claims = new Set(endpointIdentity(interfaces).claims);
  }

  /** The endpoints of a document that are the registry's own, in document order. */
  usesIn(claims: EndpointClaims): ClaimedEndpoint[] {
    if (this.#claims.size === 0) return [];
    return claims.claimed.filter((e) => claimsToCheck([e.claim]).some((claim) => this.#claims.has(claim)));
  }

  /**
   * FORBIDDEN for an admin's update of another principal's entry (`owner`'s entry `id`) with a
   * document that lists one of the registry's own endpoints: the entry stays its owner's, and the
   * URLs it lists are claimed in the owner's name, so the owner would hold the registry's URLs (and
   * the registry's own card could no longer be registered). As a refresh of such an entry, the
   * write acts for the entry's owner.
   */
  refusalForOwner(claims: EndpointClaims, id: string, owner: string): RegistryError {
    const uses = this.usesIn(claims);
    const first = uses[0]!;
    return new RegistryError(
      'FORBIDDEN',
      `${shownEndpoint(first.url, first.tenant)} is an endpoint of this registry itself (its own agent card lists it), and this document updates entry ${id}, which belongs to principal ${quote(owner)}: an entry's URLs are held by its owner, so only an admin's own entries may list the registry's endpoints. Leave them out of this entry, or list them in an entry of your own.`,
      uses.map((e) => ({
        path: e.path,
        rule: URL_RESERVED,
        message: `${shownEndpoint(quote(e.url), e.tenant)} is an endpoint of this registry itself, and entry ${id} belongs to ${quote(owner)}`,
        hint: `Remove it from this entry; the registry's own endpoints may be listed only in an entry an admin owns.`,
      })),
    );
  }

  /** FORBIDDEN when a document a non-admin registers (or refreshes) lists one of the registry's own endpoints; else undefined. */
  refusal(claims: EndpointClaims, isAdmin: boolean): RegistryError | undefined {
    if (isAdmin) return undefined;
    const uses = this.usesIn(claims);
    return uses.length > 0 ? reservedEndpoint(uses) : undefined;
  }
}

function reservedEndpoint(uses: readonly ClaimedEndpoint[]): RegistryError {
  const first = uses[0]!;
  const details: Finding[] = uses.map((e) => ({
    path: e.path,
    rule: URL_RESERVED,
    message: `${shownEndpoint(quote(e.url), e.tenant)} is an endpoint of this registry itself`,
    hint: "Remove it and list only endpoints that are yours; only an admin may register the registry's own endpoints (its own card).",
  }));
  return new RegistryError(
    'FORBIDDEN',
    `${shownEndpoint(first.url, first.tenant)} is an endpoint of this registry itself (its own agent card lists it): only an admin may register an entry that lists the registry's own endpoints. List only endpoints that are yours.`,
    details,
  );
}
