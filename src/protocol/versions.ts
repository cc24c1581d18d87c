/**
 * A2A protocol version negotiation at the door (spec section 3.6), in front of the SDK:
 * - the version comes from the `A2A-Version` header, or from the `A2A-Version` query parameter
 *   when the header is absent (3.6.1); an absent or empty value means 0.3 (3.6.2);
 * - only Major.Minor counts: "1.0.0" and "1.0.3" are 1.0 (3.6: patch versions MUST NOT be
 *   considered). @a2a-js/sdk 1.3 matches the header exactly ("1.0.0" gets VersionNotSupported,
 *   "0.3.0" misses its v0.3 handler) and ignores the query parameter, so the negotiated
 *   Major.Minor is written back into the header the SDK reads;
 * - a version the binding does not serve (per the card's supportedInterfaces, the same source
 *   the SDK checks) gets VersionNotSupportedError naming the versions it does serve, in the
 *   binding's error shape; unless the request's method is one no route takes at its path,
 *   which is answered 405 with Allow (or 404) first.
 * The HTTP bindings negotiate through negotiateVersion, the gRPC binding (a2a-version metadata,
 * no query parameter) through negotiate.
 */
import type { Request, RequestHandler } from 'express';
import { VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { notFoundHandler, routeTakes } from '../http/errors.js';
import { sendA2AError, type A2ABinding } from './a2a-errors.js';
import { majorMinor } from './version-numbers.js';

export const VERSION_PARAMETER = 'A2A-Version';
/** What an absent or empty version means (spec 3.6.2). */
export const LEGACY_VERSION = '0.3';

/** A request the door negotiated as v0.3 (negotiateVersion writes the version into the header). */
export const isLegacyRequest = (req: Request): boolean => req.header(VERSION_PARAMETER) === LEGACY_VERSION;

/**
 * A header sent twice arrives joined ("1.0, 1.0": a client and a proxy that each add it); gRPC
 * metadata values are joined the same way by the caller. One version when every copy names the
 * same Major.Minor; otherwise as it came, with its comma, which negotiate refuses as more than one.
 */
export function oneVersion(value: string): string {
  if (!value.includes(',')) return value;
  const copies = value.split(',').map((copy) => copy.trim()).filter((copy) => copy !== '');
  return new Set(copies.map((copy) => majorMinor(copy) ?? copy)).size === 1 ? copies[0]! : value;
}

/** The version a request asks for, raw: the header, else the query parameter; undefined when neither says. */
export function requestedVersion(req: Request): string | undefined {
  const header = req.header(VERSION_PARAMETER);
  if (header !== undefined && header.trim() !== '') return oneVersion(header.trim());
  // Given twice (?A2A-Version=1.0&A2A-Version=1.0) the parameter is an array: read as a header
  // sent twice is. It was ignored, and the request taken for a version-less (v0.3) one.
  const query: unknown = req.query?.[VERSION_PARAMETER];
  const values = (Array.isArray(query) ? query : [query]).filter((value): value is string => typeof value === 'string');
  const joined = values.map((value) => value.trim()).filter((value) => value !== '').join(', ');
  return joined === '' ? undefined : oneVersion(joined);
}

/**
 * Whether the request named a version (the header or the query parameter), also after
 * negotiateVersion wrote the negotiated one into the header: read from the headers as sent.
 */
export function namesVersion(req: Request): boolean {
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === VERSION_PARAMETER.toLowerCase() && raw[i + 1]!.trim() !== '') return true;
  }
  const query: unknown = req.query?.[VERSION_PARAMETER];
  return query !== undefined && query !== '';
}

/** Every A2A binding the registry serves, by the card's protocolBinding name. */
export type ProtocolBinding = A2ABinding | 'GRPC';

/**
 * Negotiates a raw requested version (undefined when the request names none) against the
 * Major.Minor versions a binding serves: the version to hand the SDK, or the error to answer.
 */
export function negotiate(
  binding: ProtocolBinding,
  raw: string | undefined,
  supported: readonly string[],
): { version: string } | { error: VersionNotSupportedError } {
  const version = raw === undefined ? LEGACY_VERSION : majorMinor(raw);
  if (version !== undefined && supported.includes(version)) return { version };
  const list = supported.join(', ');
  const asked = raw?.slice(0, 32);
  if (raw?.includes(',')) {
    // Copies that disagree (oneVersion): which counted would depend on their order, and "is not
    // supported" sent the client looking for a version to change rather than a header to drop.
    return {
      error: new VersionNotSupportedError({
        message: `A2A-Version was sent more than once, with different versions ("${asked}"): send exactly one, such as "A2A-Version: ${supported[0]}" (supported versions on the ${binding} binding: ${list}).`,
        metadata: { requestedVersion: asked ?? '', supportedVersions: list },
      }),
    };
  }
  const what = asked === undefined ? `A request without A2A-Version is a v${LEGACY_VERSION} request, and v${LEGACY_VERSION}` : `A2A-Version "${asked}"`;
  return {
    error: new VersionNotSupportedError({
      message: `${what} is not supported on the ${binding} binding; supported versions: ${list}. Send "A2A-Version: ${supported[0]}" (Major.Minor; a patch version is ignored).`,
      metadata: { requestedVersion: asked ?? LEGACY_VERSION, supportedVersions: list },
    }),
  };
}

/** Negotiates the version of requests to one HTTP binding; `supported` are Major.Minor strings. */
export function negotiateVersion(binding: A2ABinding, supported: readonly string[]): RequestHandler {
  return (req, res, next) => {
    // OPTIONS asks which methods the path takes (RFC 9110 9.3.7), of any version: express's
    // router answers it with Allow. Negotiating it refused a plain OPTIONS without A2A-Version
    // on HTTP+JSON (no v0.3 there) with the version error, though the 405 path answers Allow.
    if (req.method === 'OPTIONS') return next();
    const outcome = negotiate(binding, requestedVersion(req), supported);
    if ('version' in outcome) {
      req.headers[VERSION_PARAMETER.toLowerCase()] = outcome.version;
      return next();
    }
    // A method the path does not take (GET of POST /message:send), or a path no route has, has no
    // version to negotiate: it gets the 405 with Allow (or 404) the same request with a version
    // gets, not a version error that sends the client to add a header and then fail again.
    // Looked up only here, on the refusal: the routes are walked for no accepted request.
    if (!routeTakes(req)) return notFoundHandler(req, res, next);
    sendA2AError(req, res, binding, outcome.error);
  };
}
