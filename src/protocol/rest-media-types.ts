/**
 * Media types on the HTTP+JSON binding, fixed at our edge:
 * - answers: @a2a-js/sdk 1.3 labels every answer `application/a2a+json`. The v1.0.0
 *   specification (the one the conformance kit checks) says `application/json` for requests and
 *   responses (section 11.1); v1.0.1 recommends `application/a2a+json`. Clients of either
 *   parse both, so we answer `application/json` unless the client's Accept header prefers
 *   `application/a2a+json` (the SDK 1.x client sends "application/a2a+json, application/json"),
 *   and say Vary: Accept. Server-sent event streams keep `text/event-stream`. An answer without
 *   a body (the 204 of DeleteTaskPushNotificationConfig) has no media type to name: the label the
 *   SDK puts on every answer before it runs is dropped there.
 * - requests: a body that is not JSON gets 415 Unsupported Media Type with
 *   ContentTypeNotSupportedError (the SDK answers 400, and its JSON parser would otherwise skip
 *   the body silently); an empty body passes, whatever type it is labelled.
 */
import type { RequestHandler, Response } from 'express';
import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import { sendA2AError } from './a2a-errors.js';

const ANSWER_TYPES = ['application/json', 'application/a2a+json'];
/** Request bodies the HTTP+JSON binding reads (the SDK's own list). */
const BODY_TYPES = ['application/json', 'application/a2a+json'];

/** Labels JSON answers with the negotiated media type. Mount before anything that answers. */
export const restAnswerMediaType: RequestHandler = (req, res, next) => {
  const chosen = req.accepts(ANSWER_TYPES) || 'application/json';
  res.vary('Accept');
  const json = res.json.bind(res);
  res.json = ((body: unknown) => {
    res.type(chosen);
    return json(body);
  }) as Response['json'];
  // The SDK ends a 204 with res.end, past res.json: it went out labelled application/a2a+json,
  // whatever Accept asked, with nothing to label.
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    if (res.statusCode === 204 && !res.headersSent) res.removeHeader('Content-Type');
    return end(...args);
  }) as Response['end'];
  next();
};

/** 415 for a request body that is not JSON (a POST without a body passes, whatever type it declares). */
export const requireJsonBody: RequestHandler = (req, res, next) => {
  // Content-Length: 0 is what fetch sends for a POST without a body (":cancel", ":subscribe");
  // req.is answers null when there is no body at all.
  const typed = req.is(BODY_TYPES);
  if (req.headers['content-length'] === '0' || typed === null) {
    // An empty body has no media type to refuse, but one may be declared: fetch labels a body of
    // '' text/plain, `curl -d ''` application/x-www-form-urlencoded. The SDK refused those (400
    // CONTENT_TYPE_NOT_SUPPORTED) on ":cancel", which reads no body; the label is dropped.
    if (!typed) delete req.headers['content-type'];
    return next();
  }
  if (typed !== false) return next();
  const sent = req.headers['content-type'];
  const error = new ContentTypeNotSupportedError({
    message: sent
      ? `The request body is ${sent.slice(0, 100)}; the HTTP+JSON binding reads JSON: send Content-Type: application/json (or application/a2a+json).`
      : 'The request has a body but no Content-Type; send Content-Type: application/json (or application/a2a+json).',
  });
  sendA2AError(req, res, 'HTTP+JSON', error, 415);
};
