/**
 * Writes a JSON answer to a POST straight to the socket: one JSON.stringify, the headers
 * express's res.json would set (Content-Type application/json; charset=utf-8 unless one is set,
 * Content-Length), one res.end. express's res.json → res.send adds, for every answer, a
 * content-type parse and rebuild, a Buffer copy of the body and a freshness check that only GET
 * and HEAD can use. Mount it before the wrappers that must see the body (answerSanitizer):
 * they wrap the res.json they find, so one mounted earlier would be replaced, not wrapped.
 *
 * A task whose artifact carries a shared value (src/lib/shared-json.ts: a search answer the
 * search cache keeps) is written around that value's bytes, and its summary text's, made once:
 * the rest of the task is serialised as usual, the value itself neither serialised nor encoded
 * again.
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { sharedJsonBytes, sharedTextBytes } from '../lib/shared-json.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Stands in for a shared value while the rest is serialised; unguessable, so no request text can forge it. */
const PLACEHOLDER = `\u0000shared-json-${randomUUID()}`;
const PLACEHOLDER_JSON = JSON.stringify(PLACEHOLDER);

export const directJsonAnswers: RequestHandler = (req, res, next) => {
  if (req.method !== 'POST') return next();
  res.json = ((body: unknown) => {
    const answer = jsonAnswerBody(body);
    if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', JSON_TYPE);
    if (typeof answer === 'string') {
      res.setHeader('Content-Length', Buffer.byteLength(answer));
      res.end(answer);
      return res;
    }
    res.setHeader('Content-Length', answer.reduce((length, chunk) => length + chunk.length, 0));
    // Corked until end(): the headers and every chunk leave in one writev, without first being
    // copied into one buffer (a search answer's chunks are most of its 15-20 KB).
    res.cork();
    for (let i = 0; i < answer.length - 1; i++) res.write(answer[i]);
    res.end(answer[answer.length - 1]);
    return res;
  }) as Response['json'];
  next();
};

/** The answer's JSON: text, or chunks of bytes when shared values are spliced in (the same JSON either way). */
export function jsonAnswerBody(body: unknown): string | Buffer[] {
  return withSharedValues(body) ?? JSON.stringify(body) ?? '';
}

type Json = Record<string, unknown>;
const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The JSON-RPC answer as chunks of bytes, in order, when its task (`result.task`, or `result` itself in v0.3) has a
 * data part whose value is shared; undefined otherwise (then it is serialised as a whole).
 */
function withSharedValues(body: unknown): Buffer[] | undefined {
  const result = isJson(body) ? body.result : undefined;
  const task = isJson(result) ? (isJson(result.task) ? result.task : result) : undefined;
  if (!task || !Array.isArray(task.artifacts)) return undefined;
  const values: Buffer[] = [];
  const artifacts = task.artifacts.map((artifact: unknown) => {
    if (!isJson(artifact) || !Array.isArray(artifact.parts)) return artifact;
    // The artifact's shared values, whose texts (their summaries) may sit in other parts.
    const sharedData = artifact.parts.flatMap((part: unknown) => (isJson(part) && sharedJsonBytes(part.data) ? [part.data as object] : []));
    if (sharedData.length === 0) return artifact;
    const parts = artifact.parts.map((part: unknown) => {
      if (!isJson(part)) return part;
      const bytes = sharedJsonBytes(part.data);
      if (bytes) {
        values.push(bytes);
        return { ...part, data: PLACEHOLDER };
      }
      const text = typeof part.text === 'string' ? sharedData.map((value) => sharedTextBytes(value, part.text)).find(Boolean) : undefined;
      if (!text) return part;
      values.push(text);
      return { ...part, text: PLACEHOLDER };
    });
    return { ...artifact, parts };
  });
  if (values.length === 0) return undefined;
  const shell = { ...(body as Json), result: result === task ? { ...task, artifacts } : { ...(result as Json), task: { ...task, artifacts } } };
  const pieces = JSON.stringify(shell).split(PLACEHOLDER_JSON);
  const chunks: Buffer[] = [Buffer.from(pieces[0]!)];
  for (let i = 1; i < pieces.length; i++) chunks.push(values[i - 1]!, Buffer.from(pieces[i]!));
  return chunks;
}
