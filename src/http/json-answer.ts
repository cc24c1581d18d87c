/**
 * Writes a JSON answer to a POST straight to the socket: one JSON.stringify, the headers
 * express's res.json would set (Content-Type application/json; charset=utf-8 unless one is set,
 * Content-Length), one res.end. express's res.json → res.send adds, for every answer, a
 * content-type parse and rebuild, a Buffer copy of the body and a freshness check that only GET
 * and HEAD can use. Mount it before the wrappers that must see the body (answerSanitizer):
 * they wrap the res.json they find, so one mounted earlier would be replaced, not wrapped.
 */
import type { RequestHandler, Response } from 'express';

const JSON_TYPE = 'application/json; charset=utf-8';

export const directJsonAnswers: RequestHandler = (req, res, next) => {
  if (req.method !== 'POST') return next();
  res.json = ((body: unknown) => {
    const text = JSON.stringify(body) ?? '';
    if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', JSON_TYPE);
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(text);
    return res;
  }) as Response['json'];
  next();
};
