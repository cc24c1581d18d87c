/**
 * Authentication on the gRPC binding: the bearer token travels in the `authorization` metadata
 * (A2A v1.0, section 10.2). The call guard admits the caller (auth/access.ts) before the SDK
 * runs; the SDK's user carries that Caller, as on the HTTP bindings.
 */
import type * as grpc from '@grpc/grpc-js';
import type { UserBuilder } from '@a2a-js/sdk/server/grpc';
import type { TokenAuthenticator } from '../auth/tokens.js';
import type { Caller } from '../contract/caller.js';
import { CallerUser } from '../protocol/sdk-user.js';

/** The first text value of a metadata key (binary values and later duplicates are ignored). */
export function metadataText(metadata: grpc.Metadata, key: string): string | undefined {
  return metadata.get(key).find((v): v is string => typeof v === 'string');
}

/** The caller the guard admitted for the call (`admitted`), else the one its token makes. */
export function grpcUserBuilder(authenticator: TokenAuthenticator, admitted: (metadata: grpc.Metadata) => Caller | undefined): UserBuilder {
  return async (call) => new CallerUser(admitted(call.metadata) ?? authenticator.callerFor(metadataText(call.metadata, 'authorization')?.trim()));
}
