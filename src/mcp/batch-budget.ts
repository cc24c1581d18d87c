/**
 * The request budget of an MCP batch: each of its messages is a request, as it would be sent
 * alone (AbuseControl.admitMessages). Checked once the body is read and its envelope passed, before
 * any call runs: a batch refused here runs nothing, and is answered as the flood guard answers a
 * request over the budget (HTTP 429, Retry-After, -32603 with reason RATE_LIMITED and
 * retryAfterSeconds), id null as every refusal of a batch as a whole.
 */
import type { RequestHandler } from 'express';
import { answerInBinding, type AbuseControl } from '../http/rate-limit.js';
import { currentScope } from '../observability/request-scope.js';

export function mcpBatchBudget(abuse: AbuseControl): RequestHandler {
  return (req, res, next) => {
    const body: unknown = req.body;
    if (req.method !== 'POST' || !Array.isArray(body)) return next();
    abuse.admitMessages(req.ip ?? 'unknown', req.header('authorization'), body.length).then((refusal) => {
      if (!refusal) return next();
      const scope = currentScope();
      if (scope) Object.assign(scope, { taskState: 'REJECTED', errorCode: refusal.reason });
      // As the flood guard answers (no id: the batch's, as every refusal of a batch as a whole, is null).
      answerInBinding(req, res, refusal);
    }, next);
  };
}
