/**
 * src/http/handler-chain.ts: several handlers as one router layer keep express's rules (the A2A
 * doors' middleware runs through it), checked on a real express app over HTTP on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { handlerChain } from '../src/http/handler-chain.js';

const step =
  (name: string): RequestHandler =>
  (req, _res, next) => {
    (req as { seen?: string[] }).seen = [...((req as { seen?: string[] }).seen ?? []), `${name} ${req.baseUrl} ${req.url}`];
    next();
  };
const answer: RequestHandler = (req, res) => {
  res.json({ seen: (req as { seen?: string[] }).seen });
};
const recover: ErrorRequestHandler = (err: Error, req, _res, next) => {
  (req as { seen?: string[] }).seen = [...((req as { seen?: string[] }).seen ?? []), `recovered ${err.message}`];
  next();
};

let server: http.Server;
let base: string;
before(async () => {
  const app = express();
  app.use('/order', handlerChain([step('a'), step('b')]), handlerChain([step('c')]), answer);
  const failsByNext: RequestHandler = (_req, _res, next) => next(new Error('by next'));
  const toNextRoute: RequestHandler = (_req, _res, next) => next('route');
  app.use('/next-error', handlerChain([step('a'), failsByNext, step('skipped'), recover, step('b'), answer]));
  app.use('/thrown', handlerChain([() => { throw new Error('thrown'); }, step('skipped'), recover, answer]));
  app.use('/rejected', handlerChain([async () => { throw new Error('rejected'); }, recover, answer]));
  app.use('/route', handlerChain([toNextRoute, step('after route'), answer]));
  // Past the chain's end, an error reaches the app's own error handler; without one, the next layer.
  const fails: RequestHandler = (_req, _res, next) => next(new Error('for the app'));
  app.use('/unhandled', handlerChain([fails]), step('skipped'));
  app.use('/falls-through', handlerChain([step('a')]));
  app.use('/falls-through', answer);
  app.use(((err: Error, _req, res, _next) => res.status(500).json({ app: err.message })) as ErrorRequestHandler);
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const get = async (path: string) => {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: (await res.json()) as { seen?: string[]; app?: string } };
};

describe('handlerChain', () => {
  test('runs its handlers in order, each seeing the mount path as express gives it', async () => {
    assert.deepEqual(await get('/order/x?q=1'), { status: 200, body: { seen: ['a /order /x?q=1', 'b /order /x?q=1', 'c /order /x?q=1'] } });
  });

  test('next(err), a throw and a rejected promise skip request handlers to the next error handler', async () => {
    assert.deepEqual(await get('/next-error'), { status: 200, body: { seen: ['a /next-error /', 'recovered by next', 'b /next-error /'] } });
    assert.deepEqual(await get('/thrown'), { status: 200, body: { seen: ['recovered thrown'] } });
    assert.deepEqual(await get('/rejected'), { status: 200, body: { seen: ['recovered rejected'] } });
  });

  test("next('route') goes on with the next handler", async () => {
    assert.deepEqual(await get('/route'), { status: 200, body: { seen: ['after route /route /'] } });
  });

  test('past its end, an error goes to the app and a request to the next layer', async () => {
    assert.deepEqual(await get('/unhandled'), { status: 500, body: { app: 'for the app' } });
    assert.deepEqual(await get('/falls-through'), { status: 200, body: { seen: ['a /falls-through /'] } });
  });
});
