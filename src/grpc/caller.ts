/**
 * Authentication on the gRPC binding: the bearer token travels in the `authorization` metadata
 * (A2A v1.0, section 10.2), and becomes the same Caller, carried on the same SDK user, as on
 * the HTTP bindings.
 */
import type * as grpc from '@grpc/grpc-js';
import type { UserBuilder } from '@a2a-js/sdk/server/grpc';
import type { TokenAuthenticator } from '../auth/tokens.js';
import { CallerUser } from '../protocol/sdk-user.js';

/** The first text value of a metadata key (binary values and later duplicates are ignored). */
export function metadataText(metadata: grpc.Metadata, key: string): string | undefined {
  const value = metadata.get(key).find((v): v is string => typeof v === 'string');
  return value;
}

export function grpcUserBuilder(authenticator: TokenAuthenticator): UserBuilder {
  return async (call) => new CallerUser(authenticator.callerFor(metadataText(call.metadata, 'authorization')));
}
