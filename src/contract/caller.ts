/**
 * Who is asking, as a door (A2A, gRPC, MCP, web) authenticated them. Every service operation
 * receives one and decides from it what the caller may do: doors authenticate, the service
 * authorises, so every door applies the same rules.
 */
export interface Caller {
  /** The authenticated principal; undefined for an anonymous caller. */
  principal?: string;
  /** The principal is an administrator (may act on every entry, exempt from limits). */
  isAdmin: boolean;
  /** The client's address as the door saw it (after REGISTRY_TRUST_PROXY): rate limits key on it. */
  address?: string;
  /** A credential was presented but not recognised (for the message that says so). */
  invalidCredential?: boolean;
}

/** A principal named `admin` may act on every entry. */
export const ADMIN_PRINCIPAL = 'admin';

export const anonymousCaller = (address?: string): Caller => ({ isAdmin: false, address });

/** An authenticated caller; what writes need. */
export interface Actor {
  principal: string;
  isAdmin: boolean;
}
