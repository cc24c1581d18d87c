/**
 * A door is one way into the registry (A2A JSON-RPC + HTTP+JSON, gRPC, MCP, the catalog and
 * discovery documents, the web page). Every door is a thin adapter over the same core: it
 * authenticates callers (core.authenticator), turns requests into operations, and runs them
 * through core.operations — so rules, limits, quotas and metrics are the same on every door.
 */
import type { Express } from 'express';
import type { RegistryConfig } from '../config/config.js';
import type { PathFailureFormat } from '../http/errors.js';
import type { RegistryCore } from './build-registry.js';

/** One entry of the card's supportedInterfaces, as wire JSON. */
export interface CardInterface {
  url: string;
  protocolBinding: string;
  protocolVersion: string;
}

export interface DoorContext {
  core: RegistryCore;
  /** The absolute base URL peers reach this registry at (PUBLIC_URL, or the address listened on). */
  publicUrl: string;
  /** The registry's own agent card (v1.0 wire JSON) with absolute URLs. */
  card: Record<string, unknown>;
  /**
   * Why the registry is not ready, or undefined: what GET /readyz answers 503 with (shutting
   * down, storage, the index, every door's own notReady). A door with a health check of its own
   * (gRPC's) answers from it, so that both say the same from the same moment.
   */
  notReady(): Promise<string | undefined>;
}

/** What a door that runs something of its own (a server on another port, timers) must stop. */
export interface MountedDoor {
  /**
   * Stops accepting, lets in-flight work finish (up to REGISTRY_SHUTDOWN_GRACE_SECONDS:
   * config.connections.shutdownGraceMs), releases what the door holds. `hurry` aborted (a second
   * stop signal) cuts what is still in flight at once instead of at the grace's end.
   */
  close(hurry?: AbortSignal): Promise<void>;
  /** Why the door cannot serve right now (its own listener is down), or undefined; /readyz reports it. */
  notReady?(): string | undefined;
}

/** A door listening on a port of its own, opened before the card is built (see Door.open). */
export interface OpenedDoor extends MountedDoor {
  /** What the door adds to the card's supportedInterfaces: the address it actually listens on. */
  readonly interfaces: readonly CardInterface[];
  /** Starts answering, once the card (and what is built from it) exists. */
  serve(ctx: DoorContext): void | Promise<void>;
}

export interface Door {
  readonly name: string;
  /**
   * For a door with a listener of its own (gRPC): binds it before the card is built, so the card
   * names the address actually bound (a port of 0 picks a free one). Undefined when the door is
   * off (not configured). Every door's open runs before any door is mounted.
   */
  open?(core: RegistryCore): Promise<OpenedDoor | undefined>;
  /**
   * Paths (app.use prefixes) whose GET answers the door opens to every origin
   * (http/open-reads.ts): the HTTP app answers their CORS preflight before any route, ahead of
   * the configured CORS. Asked before any door is mounted.
   */
  openReads?(config: RegistryConfig): readonly string[];
  /**
   * How refusals under the door's paths (app.use prefixes) are shaped, for the refusals the HTTP
   * app makes before any door's route runs (http/app.ts: a request with two Host fields). Asked
   * before any door is mounted; the door's own routes set the same format for theirs.
   */
  failureFormats?(): readonly PathFailureFormat[];
  /** Adds the door's routes to the HTTP app (between the base routes and the final handlers). */
  mount?(app: Express, ctx: DoorContext): void | MountedDoor | Promise<void | MountedDoor>;
}
