/**
 * A door is one way into the registry (A2A JSON-RPC + HTTP+JSON, gRPC, MCP, the catalog and
 * discovery documents, the web page). Every door is a thin adapter over the same core: it
 * authenticates callers (core.authenticator), turns requests into operations, and runs them
 * through core.operations — so rules, limits, quotas and metrics are the same on every door.
 */
import type { Express } from 'express';
import type { RegistryCore } from './build-registry.js';

export interface DoorContext {
  core: RegistryCore;
  /** The absolute base URL peers reach this registry at (PUBLIC_URL, or the address listened on). */
  publicUrl: string;
  /** The registry's own agent card (v1.0 wire JSON) with absolute URLs. */
  card: Record<string, unknown>;
}

/** What a door that runs something of its own (a server on another port, timers) must stop. */
export interface MountedDoor {
  /** Stops accepting, lets in-flight work finish, releases what the door holds. */
  close(): Promise<void>;
}

export interface Door {
  readonly name: string;
  /** Adds the door's routes to the HTTP app (between the base routes and the final handlers). */
  mount(app: Express, ctx: DoorContext): void | MountedDoor | Promise<void | MountedDoor>;
}
