/**
 * Servers the registry fetches from in tests: real HTTP (or HTTPS) servers on 127.0.0.1 whose
 * routes each test sets, counting requests and noting when a connection was closed under them.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

export interface OriginServer {
  /** http://127.0.0.1:<port> (or https://<tlsHost>:<port>). */
  url: string;
  port: number;
  /** Requests received, by path (query included). */
  hits: Map<string, number>;
  /** Every request's headers, in order. */
  requests: { path: string; method: string; headers: http.IncomingHttpHeaders }[];
  route(path: string, handler: Route): void;
  /** A route that answers JSON with optional headers. */
  json(path: string, body: unknown, headers?: Record<string, string>): void;
  close(): Promise<void>;
}

export async function startOrigin(options: { tls?: { key: string; cert: string; host: string }; onServername?: (name: string) => void; listenOn?: '127.0.0.1' | '::1' } = {}): Promise<OriginServer> {
  const routes = new Map<string, Route>();
  const hits = new Map<string, number>();
  const requests: OriginServer['requests'] = [];
  const listener: http.RequestListener = (req, res) => {
    const key = req.url ?? '/';
    hits.set(key, (hits.get(key) ?? 0) + 1);
    requests.push({ path: key, method: req.method ?? 'GET', headers: req.headers });
    const handler = routes.get(key) ?? routes.get(key.replace(/\?.*$/, ''));
    if (!handler) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such route"}');
      return;
    }
    Promise.resolve(handler(req, res)).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
      else res.destroy();
    });
  };
  const server = options.tls
    ? https.createServer({
        key: options.tls.key,
        cert: options.tls.cert,
        SNICallback: (name, cb) => {
          options.onServername?.(name);
          cb(null, undefined);
        },
      }, listener)
    : http.createServer(listener);
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listenOn = options.listenOn ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, listenOn, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: options.tls ? `https://${options.tls.host}:${port}` : `http://${listenOn.includes(':') ? `[${listenOn}]` : listenOn}:${port}`,
    port,
    hits,
    requests,
    route: (p, handler) => void routes.set(p, handler),
    json: (p, body, headers = {}) =>
      void routes.set(p, (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A self-signed certificate for `host` (openssl), made in a temp dir that is removed at once. */
export function selfSignedCertificate(host: string): { key: string; cert: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-registry-cert-'));
  try {
    const result = spawnSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', `/CN=${host}`, '-addext', `subjectAltName=DNS:${host}`,
      '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    ], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`openssl failed: ${result.stderr}`);
    return { key: fs.readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Resolves when `predicate` holds, checking every few milliseconds (no fixed sleeps in tests). */
export async function waitFor(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
