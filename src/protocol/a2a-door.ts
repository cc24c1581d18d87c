/**
 * The A2A door: the well-known card and the JSON-RPC and HTTP+JSON bindings, a thin transport
 * layer over the SDK's request handler, which runs our executor over the shared operations.
 * It owns what the SDK does not (or does differently from the spec): body limits and
 * binding-shaped errors, the card negotiated per protocol version with caching headers, version
 * negotiation, HTTP+JSON media types, authentication, shape and integer-parameter checks before
 * the SDK, and the request scope and log line.
 */
import { getSupportedVersions } from '@a2a-js/sdk/server';
import { jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { AgentCard } from '@a2a-js/sdk';
import type { RequestHandler } from 'express';
import type { Door, DoorContext } from '../composition/door.js';
import { authenticate } from '../http/authentication.js';
import { answerOptions, bodyErrorHandler } from '../http/errors.js';
import { jsonBody } from '../http/json-body.js';
import { handlerChain } from '../http/handler-chain.js';
import { directJsonAnswers } from '../http/json-answer.js';
import { requestScope, scopedErrorHandler, type RequestNamer } from '../http/request-log.js';
import { cutSlowReaders } from '../http/slow-readers.js';
import { sseHeartbeat } from '../http/sse-heartbeat.js';
import { openToAllOrigins } from '../http/open-reads.js';
import { headOfStreams } from '../http/head-streams.js';
import { answerSanitizer } from '../http/security.js';
import { restMethodOf, restRoute } from '../observability/metrics.js';
import { cardEndpoint } from './card-endpoint.js';
import { legacyCompatibleCard } from './legacy-card.js';
import { a2aRequestHandler } from './request-handler.js';
import { requestIntegerGuard } from './integer-params.js';
import { withJsonRpcErrorData } from './jsonrpc-error-data.js';
import { requireJsonRpcBody } from './jsonrpc-media-type.js';
import {
  REST_BODY_EXAMPLE,
  jsonRpcEndpointOnly,
  jsonRpcRouteGuard,
  jsonRpcShapeGuard,
  restMethodNameGuard,
  restRouteGuard,
  restShapeGuard,
  restTaskVerbGuard,
} from './request-guard.js';
import { requireJsonBody, restAnswerMediaType } from './rest-media-types.js';
import { jsonRpcConfigPages } from './push-config-pages.js';
import { jsonRpcEmptyResult } from './jsonrpc-empty-result.js';
import { restPushConfigList } from './rest-push-config-list.js';
import { callerUserBuilder } from './sdk-user.js';
import { untenantedContextBuilder } from './call-context.js';
import { codePointPrefix } from '../lib/code-points.js';
import { watchEventIds } from './watch-resume.js';
import { isLegacyRequest, negotiateVersion } from './versions.js';
import { legacyStreamErrorEvents } from './legacy-stream-errors.js';

export const JSONRPC_PATH = '/a2a/jsonrpc';
export const REST_PATH = '/a2a/rest';
export const CARD_PATH = '/.well-known/agent-card.json';

const STREAMING_METHODS = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);

/**
 * JSON-RPC requests are named by their method, its first 64 characters, as the MCP door names its
 * calls: the longest method is 35, and an unknown one is the caller's to make as long as the body
 * limit lets it. One whose body names none (it did not parse, or never arrived in full) is named
 * by its route, `POST /a2a/jsonrpc`, as the MCP door names a request by its (`GET /mcp`): the path
 * within the endpoint alone made it "POST /", the body that never came and the one without a
 * method alike.
 */
const nameJsonRpcRequest: RequestNamer = (req) => {
  const body: unknown = req.body;
  const rpcMethod = body && typeof body === 'object' && 'method' in body && typeof body.method === 'string' ? body.method : undefined;
  return { method: (rpcMethod === undefined ? undefined : codePointPrefix(rpcMethod, 64)) ?? `${req.method} ${jsonRpcRoute(req.path)}`, streaming: rpcMethod !== undefined && STREAMING_METHODS.has(rpcMethod) };
};

/** The endpoint (with or without its trailing slash), or a path below it (refused 404), its first 64 characters: the caller's to make long. */
const jsonRpcRoute = (path: string): string => (path === '/' ? JSONRPC_PATH : `${JSONRPC_PATH}${path.slice(0, 64)}`);

/**
 * HTTP+JSON requests are named by their route, as their metric label (`GET /tasks/{id}`): not by
 * the path sent. A stream is one whose route streams, as express routes it (`/MESSAGE:STREAM/`
 * is message:stream too: restRoute).
 */
const nameRestRequest: RequestNamer = (req) => ({ method: restMethodOf(req), streaming: /:(stream|subscribe)$/.test(restRoute(req.path)) });

export const a2aDoor: Door = {
  name: 'a2a',
  // The card is public metadata, served to anyone whatever REGISTRY_PUBLIC_READ says, and the
  // catalogs and ARD manifest (open to every origin) point browser-based agents to it: every
  // origin may read it, its preflight answered too, as the MCP Server Card. Behind the configured
  // CORS only, a page on another origin read the catalog but not the card it names.
  openReads: () => [CARD_PATH],
  mount(app, ctx: DoorContext) {
    const { core } = ctx;
    const { config, log, metrics, abuse } = core;
    const requestHandler = a2aRequestHandler(ctx);
    const sdkCard = AgentCard.fromJSON(ctx.card);
    const userBuilder = callerUserBuilder(core.authenticator);

    const card = cardEndpoint({ v1: ctx.card, legacyCompatible: legacyCompatibleCard(ctx.card) }, config.cardMaxAgeSeconds);
    app.get(CARD_PATH, openToAllOrigins, card);
    app.head(CARD_PATH, openToAllOrigins, card);

    // Our own parser and limit in front of the SDK's (which would answer 413 with an HTML page);
    // once a body is parsed, the SDK's express.json() leaves it alone.
    const bodyLimits = { limit: config.maxBodyBytes, maxDepth: config.hardening.maxJsonDepth };
    const json = jsonBody({ ...bodyLimits, types: ['application/json', 'application/a2a+json', 'application/*+json'] });
    // JSON-RPC reads a body of any declared type, so refusing a wrong one can name its id.
    const rpcJson = jsonBody({ ...bodyLimits, anyType: true });
    // Order matters: count everything, refuse floods before reading bodies, cap streams, cut
    // those whose client stopped reading, keep quiet ones open and number watch events, label HTTP+JSON answers
    // before anything answers, negotiate the version, refuse non-JSON bodies (on JSON-RPC with
    // the request's id, read from the body whatever its type) and unusable credentials, check
    // shapes and integer params (as sent) before the SDK, and scrub internal errors out of
    // whatever the SDK answers. Each binding's chain is one router layer (handler-chain.ts).
    // JSON-RPC reads the body first: its requests are named (and refused) by the body's method
    // and id; only a method or path the endpoint does not take is refused before. HTTP+JSON names
    // them by route, so what needs no body (a wrong route or method, the version, the media type,
    // credentials) is refused before the body is read.
    const limits = [abuse.streamCap(), cutSlowReaders(), sseHeartbeat(config.connections.sseHeartbeatMs), watchEventIds()];
    const credentials = authenticate(core.authenticator, { publicRead: config.publicRead });
    app.use(
      JSONRPC_PATH,
      handlerChain([
        metrics.middleware(),
        abuse.floodGuard(),
        // A method or path the endpoint does not take needs no body: refused before it is read.
        jsonRpcRouteGuard(requestScope(log, nameJsonRpcRequest)),
        rpcJson,
        scopedErrorHandler(log, nameJsonRpcRequest, bodyErrorHandler(log)),
        requestScope(log, nameJsonRpcRequest),
        ...limits,
        jsonRpcEndpointOnly,
        negotiateVersion('JSONRPC', [...getSupportedVersions(sdkCard, 'JSONRPC')]),
        // v0.3 streaming methods answer a refusal as an event stream: before any guard refuses.
        legacyStreamErrorEvents,
        requireJsonRpcBody,
        credentials,
        jsonRpcShapeGuard,
        requestIntegerGuard('JSONRPC'),
        // JSON-RPC answers only: HTTP+JSON answers keep express's res.json (restAnswerMediaType labels them).
        // Before answerSanitizer, which wraps whatever res.json is when it runs: placed after it,
        // this would replace the sanitizer's wrapper (no scrubbing, no Retry-After on JSON-RPC).
        directJsonAnswers,
        answerSanitizer(isLegacyRequest),
        // After the two above, whose res.json they wrap.
        jsonRpcConfigPages,
        jsonRpcEmptyResult,
      ]),
      // Its errors carry their ErrorInfo as data, which the SDK's v0.3 layer would drop (jsonrpc-error-data.ts).
      jsonRpcHandler({ requestHandler: withJsonRpcErrorData(requestHandler), userBuilder, contextBuilder: untenantedContextBuilder, legacyCompat: { enabled: true } }),
    );
    app.use(
      REST_PATH,
      handlerChain([
        metrics.middleware(),
        abuse.floodGuard(),
        requestScope(log, nameRestRequest),
        ...limits,
        // After them, so a HEAD's dropped writes never reach them.
        headOfStreams,
        restAnswerMediaType,
        // A wrong method or path has no version to negotiate (as on paths no route takes: versions.ts).
        restMethodNameGuard,
        restTaskVerbGuard,
        // After the verbs' own (whose paths GET /tasks/{id} matches too): OPTIONS lists every router's methods.
        answerOptions,
        restRouteGuard(),
        negotiateVersion('HTTP+JSON', [...getSupportedVersions(sdkCard, 'HTTP+JSON')]),
        requireJsonBody,
        credentials,
        json,
        bodyErrorHandler(log, REST_BODY_EXAMPLE),
        restShapeGuard,
        requestIntegerGuard('HTTP+JSON'),
        answerSanitizer(isLegacyRequest),
      ]),
      // Ahead of the SDK's route, which drops the page asked for.
      restPushConfigList({ requestHandler, userBuilder }),
      restHandler({ requestHandler, userBuilder, contextBuilder: untenantedContextBuilder }),
    );
  },
};
