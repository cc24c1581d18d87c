/**
 * The CLI's fetch over node:http (src/cli/http-fetch.ts) against a real server on 127.0.0.1:
 * what the registry's client and the CLI's own checks ask of fetch. The commands themselves
 * (errors, timeouts, streams, TLS) are driven through it by cli.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import { RegistryClient } from '../src/cli/client.js';
import { MAX_ANSWER_BYTES, RegistryDeclined, RegistryUnreachable, dataPart, registryFetch, type Connection } from '../src/cli/connection.js';
import { RedirectRefused, httpFetch } from '../src/cli/http-fetch.js';
import { UnusableAnswer } from '../src/cli/unusable-answer.js';
import { v1Card } from './support/documents.js';
import { eventually } from './support/eventually.js';

/** A server that answers every request with `bytes` as they are, whatever HTTP would allow; closed by the returned function. */
async function rawServer(bytes: string): Promise<{ url: string; close: () => void }> {
  const server = net.createServer((socket) => socket.once('data', () => socket.end(bytes)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

describe('the CLI\'s fetch (node:http)', () => {
  let server: http.Server;
  let base: string;
  const seen: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        if (req.url === '/moved') return void res.writeHead(302, { location: '/card' }).end();
        if (req.url === '/kept') return void res.writeHead(307, { location: '/card' }).end();
        if (req.url === '/permanent') return void res.writeHead(308, { location: '/card' }).end();
        if (req.url === '/see-other') return void res.writeHead(303, { location: '/card' }).end();
        if (req.url === '/loop') return void res.writeHead(301, { location: '/loop' }).end();
        if (req.url === '/empty') return void res.writeHead(204).end();
        if (req.url === '/stall') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          return void res.write('data: first\n\n');
        }
        res.writeHead(200, { 'content-type': 'application/json', 'x-two': ['a', 'b'] });
        res.end(JSON.stringify({ method: req.method, url: req.url, body }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  test('a POST: method, headers and a string or bytes body with its length; the answer a Response (status, headers, JSON)', async () => {
    for (const body of ['{"jsonrpc":"2.0"}', new TextEncoder().encode('{"é":1}')]) {
      const response = await httpFetch(`${base}/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer t' }, body });
      assert.ok(response instanceof Response);
      assert.equal(response.status, 200);
      assert.equal(response.ok, true);
      assert.equal(response.headers.get('content-type'), 'application/json');
      assert.equal(response.headers.get('x-two'), 'a, b');
      const sent = typeof body === 'string' ? body : new TextDecoder().decode(body);
      assert.deepEqual(await response.json(), { method: 'POST', url: '/a2a/jsonrpc', body: sent });
      const last = seen.at(-1)!;
      assert.equal(last.headers.authorization, 'Bearer t');
      assert.equal(last.headers['content-length'], String(Buffer.byteLength(sent)));
    }
  });

  test('it names itself (User-Agent: WAF rules refuse requests without one) unless told otherwise; the CLI asks for JSON where the SDK names no type (the card), and keeps the type it names', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    await (await httpFetch(`${base}/card`)).body?.cancel();
    assert.equal(seen.at(-1)!.headers['user-agent'], `a2a-agent-registry/${version} (cli)`);
    await (await httpFetch(`${base}/card`, { headers: { 'User-Agent': 'probe/1' } })).body?.cancel();
    assert.equal(seen.at(-1)!.headers['user-agent'], 'probe/1');
    const cliFetch = registryFetch({ url: base, tokenSource: 'none', timeoutMs: 5000 });
    await (await cliFetch(`${base}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).body?.cancel();
    assert.equal(seen.at(-1)!.headers.accept, 'application/json');
    assert.equal(seen.at(-1)!.headers['user-agent'], `a2a-agent-registry/${version} (cli)`);
    await (await cliFetch(`${base}/a2a/jsonrpc`, { method: 'POST', headers: { Accept: 'text/event-stream' }, body: '{}' })).body?.cancel();
    assert.equal(seen.at(-1)!.headers.accept, 'text/event-stream');
  });

  test('a GET follows a redirect, as fetch does (the card at another URL), its Response\'s url where it was answered; a loop ends', async () => {
    const got = await httpFetch(`${base}/moved`);
    assert.equal(got.status, 200);
    assert.deepEqual(await got.json(), { method: 'GET', url: '/card', body: '' });
    assert.equal(got.redirected, true);
    assert.equal(got.url, `${base}/card`);
    const direct = await httpFetch(`${base}/card`);
    await direct.body?.cancel();
    assert.equal(direct.redirected, false);
    assert.equal(direct.url, `${base}/card`);
    await assert.rejects(httpFetch(`${base}/loop`), (err: Error) => err instanceof TypeError && /redirect count exceeded/.test(String((err.cause as Error).message)));
  });

  test('a POST answered 307 or 308 (Caddy\'s http -> https redirect) is sent on with its method and body, as fetch does; 301, 302 or 303, which fetch sends on as a bodiless GET, is refused naming where it pointed', async () => {
    for (const path of ['/kept', '/permanent']) {
      const posted = await httpFetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0"}' });
      assert.equal(posted.status, 200, path);
      assert.deepEqual(await posted.json(), { method: 'POST', url: '/card', body: '{"jsonrpc":"2.0"}' }, path);
      assert.equal(seen.at(-1)!.headers['content-length'], '17');
    }
    for (const path of ['/moved', '/see-other']) {
      await assert.rejects(httpFetch(`${base}${path}`, { method: 'POST', body: '{}' }), (err: Error) => {
        assert.ok(err instanceof TypeError && err.cause instanceof RedirectRefused, String(err));
        assert.equal(err.cause.location, `${base}/card`);
        assert.match(err.cause.message, /^POST answered HTTP 30[23], a redirect to http:\/\/127\.0\.0\.1:\d+\/card that would be followed as a GET without the request's body$/);
        return true;
      });
    }
    // Told to the CLI's user with the URL to give instead.
    const post = registryFetch({ url: base, tokenSource: 'none', timeoutMs: 5000 });
    await assert.rejects(post(`${base}/see-other`, { method: 'POST', body: '{}' }), {
      constructor: RegistryUnreachable,
      message: `cannot reach the registry at ${base}: POST /see-other was redirected (HTTP 303) to ${base}/card, where a JSON-RPC request would arrive as a GET without its body: give ${base}/card as --registry or A2A_REGISTRY_URL`,
    });
    // redirect: 'manual' has it as it came, redirect: 'error' rejects at it.
    const manual = await httpFetch(`${base}/kept`, { method: 'POST', body: '{}', redirect: 'manual' });
    assert.equal(manual.status, 307);
    assert.equal(manual.headers.get('location'), '/card');
    await assert.rejects(httpFetch(`${base}/kept`, { method: 'POST', body: '{}', redirect: 'error' }), (err: Error) => /unexpected redirect/.test(String((err.cause as Error).message)));
  });

  test('a redirect to another origin does not carry the bearer token on (a POST keeps its body); one to the same origin does; the CLI then knows the registry saw no token', async () => {
    const other = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', () => {
        const status = req.url === '/a2a/jsonrpc' && !req.headers.authorization ? 401 : 200;
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ authorization: req.headers.authorization ?? null, body }));
      });
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const away = http.createServer((req, res) => res.writeHead(308, { location: `${otherUrl}${req.url}` }).end());
    await new Promise<void>((resolve) => away.listen(0, '127.0.0.1', resolve));
    const awayUrl = `http://127.0.0.1:${(away.address() as AddressInfo).port}`;
    try {
      const response = await httpFetch(`${awayUrl}/card`, { headers: { authorization: 'Bearer secret' } });
      assert.deepEqual(await response.json(), { authorization: null, body: '' });
      const posted = await httpFetch(`${awayUrl}/card`, { method: 'POST', headers: { authorization: 'Bearer secret' }, body: '{"a":1}' });
      assert.deepEqual(await posted.json(), { authorization: null, body: '{"a":1}' });
      await httpFetch(`${base}/moved`, { headers: { authorization: 'Bearer secret' } });
      assert.equal(seen.at(-1)!.url, '/card');
      assert.equal(seen.at(-1)!.headers.authorization, 'Bearer secret');
      // A write through an http -> https redirect: the registry saw no token, which the CLI's hint then says (remote.ts), not that the token is wrong.
      const connection: Connection = { url: awayUrl, token: 'secret', tokenSource: 'option', timeoutMs: 5000 };
      await assert.rejects(registryFetch(connection)(`${awayUrl}/a2a/jsonrpc`, { method: 'POST', body: '{}' }), (err: Error) => err instanceof RegistryDeclined && err.error.code === 'UNAUTHENTICATED');
      assert.equal(connection.tokenLeftAt, otherUrl);
      const sameOrigin: Connection = { url: base, token: 'secret', tokenSource: 'option', timeoutMs: 5000 };
      await (await registryFetch(sameOrigin)(`${base}/moved`)).body?.cancel();
      assert.equal(sameOrigin.tokenLeftAt, undefined);
    } finally {
      other.close();
      away.close();
    }
  });

  test('an answer without a body (204) has none', async () => {
    const response = await httpFetch(`${base}/empty`);
    assert.equal(response.status, 204);
    assert.equal(response.body, null);
  });

  test('aborted before the answer: rejected with the signal\'s reason; after it: the body being read fails with that reason', async () => {
    const early = new AbortController();
    const reason = new Error('given up');
    early.abort(reason);
    await assert.rejects(httpFetch(`${base}/card`, { signal: early.signal }), (err) => err === reason);

    const late = new AbortController();
    const response = await httpFetch(`${base}/stall`, { signal: late.signal });
    const reader = response.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'data: first\n\n');
    const stalled = reader.read();
    const timeout = new Error('the answer was not complete within 1 s');
    late.abort(timeout);
    await assert.rejects(stalled, (err) => err === timeout);
  });

  test('nothing listening: rejected as fetch is ("fetch failed"), the system\'s code in its cause', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(httpFetch(`http://127.0.0.1:${port}/`), (err: Error) => err instanceof TypeError && err.message === 'fetch failed' && (err.cause as NodeJS.ErrnoException).code === 'ECONNREFUSED');
  });

  test('a status HTTP has not (600, 999; a 101 with no upgrade asked for) rejects the fetch, naming it; the CLI says no registry answered there', async () => {
    const answers = {
      'HTTP 600 Weird': 'HTTP/1.1 600 Weird\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}',
      'HTTP 101 Switching Protocols': 'HTTP/1.1 101 Switching Protocols\r\n\r\n',
      'HTTP 999 Odd': 'HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\nHTTP/1.1 999 Odd\r\ncontent-length: 0\r\n\r\n',
    };
    for (const [status, bytes] of Object.entries(answers)) {
      const raw = await rawServer(bytes);
      try {
        // It was a RangeError thrown in node:http's 'response' handler: uncaught, the process ended with its stack.
        await assert.rejects(httpFetch(`${raw.url}/a2a/jsonrpc`, { method: 'POST', body: '{}' }), (err: Error) => {
          assert.ok(err instanceof TypeError && err.message === 'fetch failed', String(err));
          assert.ok(err.cause instanceof UnusableAnswer, String(err.cause));
          assert.equal(err.cause.message, `${status}, which is no HTTP status (200 to 599)`);
          return true;
        });
        const fetchCard = registryFetch({ url: raw.url, tokenSource: 'none', timeoutMs: 5000 });
        await assert.rejects(fetchCard(`${raw.url}/.well-known/agent-card.json`), (err: Error) => {
          assert.ok(err instanceof RegistryUnreachable, String(err));
          assert.equal(
            err.message,
            `no A2A registry at ${raw.url} (GET /.well-known/agent-card.json was answered ${status}, which is no HTTP status (200 to 599)); check --registry or A2A_REGISTRY_URL, or the proxy in front of the registry`,
          );
          return true;
        });
      } finally {
        raw.close();
      }
    }
  });

  test('a compressed answer, which it does not ask for (no Accept-Encoding) but a proxy may send all the same, is decoded as fetch decodes it: gzip, deflate (zlib or raw), br, several in turn; an event stream still streams', async () => {
    const json = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { name: 'é'.repeat(2000) } });
    const encoded: Record<string, Buffer> = {
      gzip: zlib.gzipSync(json),
      'x-gzip': zlib.gzipSync(json),
      deflate: zlib.deflateSync(json),
      'Deflate ': zlib.deflateRawSync(json),
      br: zlib.brotliCompressSync(json),
      'gzip, br': zlib.brotliCompressSync(zlib.gzipSync(json)),
      'identity, gzip': zlib.gzipSync(json),
    };
    let acceptEncoding: string | undefined = 'unset';
    const compressing = http.createServer((req, res) => {
      acceptEncoding = req.headers['accept-encoding'];
      const coding = decodeURIComponent(req.url!.slice(1));
      if (coding === 'stream') {
        // An event stream through a compressing proxy: each event flushed as it comes.
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
        const gzip = zlib.createGzip();
        gzip.pipe(res);
        gzip.write('data: {"first":true}\n\n');
        return void gzip.flush();
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding }).end(encoded[coding] ?? Buffer.from(json));
    });
    await new Promise<void>((resolve) => compressing.listen(0, '127.0.0.1', resolve));
    const at = `http://127.0.0.1:${(compressing.address() as AddressInfo).port}`;
    try {
      for (const coding of Object.keys(encoded)) {
        const response = await httpFetch(`${at}/${encodeURIComponent(coding)}`, { method: 'POST', body: '{}' });
        assert.equal(await response.text(), json, coding);
      }
      assert.equal(acceptEncoding, undefined, 'no Accept-Encoding is sent');
      const controller = new AbortController();
      const stream = await httpFetch(`${at}/stream`, { method: 'POST', body: '{}', signal: controller.signal });
      const reader = stream.body!.getReader();
      assert.equal(new TextDecoder().decode((await reader.read()).value), 'data: {"first":true}\n\n', 'the first event, the stream still open');
      const next = reader.read();
      const timeout = new Error('the answer was not complete within 1 s');
      controller.abort(timeout);
      await assert.rejects(next, (err) => err === timeout);
      // A coding it cannot decode: named, not JSON.parse's "Unexpected token" over the bytes.
      await assert.rejects(httpFetch(`${at}/zstd`, { method: 'POST', body: '{}' }), (err: Error) => {
        assert.ok(err.cause instanceof UnusableAnswer, String(err.cause));
        assert.equal(err.cause.message, 'compressed as zstd (Content-Encoding), which the CLI cannot decode (it decodes gzip, deflate and br)');
        return true;
      });
      const fetchCard = registryFetch({ url: at, tokenSource: 'none', timeoutMs: 5000 });
      await assert.rejects(fetchCard(`${at}/compress`), {
        constructor: RegistryUnreachable,
        message: `no A2A registry at ${at} (GET /compress was answered compressed as compress (Content-Encoding), which the CLI cannot decode (it decodes gzip, deflate and br)); check --registry or A2A_REGISTRY_URL, or the proxy in front of the registry`,
      });
      // Bytes that are not the coding they claim: the body being read fails, saying so.
      const damaged = await httpFetch(`${at}/gzip,%20gzip`);
      await assert.rejects(damaged.text(), { constructor: UnusableAnswer, message: 'gzip-compressed (Content-Encoding) with bytes that do not decode (incorrect header check)' });
    } finally {
      compressing.closeAllConnections();
      compressing.close();
    }
  });

  test('a connection cut mid-answer (the card, a POST; a length given or chunked) is a registry that cannot be reached, exit 3 (scripts retry it), through the SDK as through the fetch; a compressed body that does not decode, an answer from no registry', async () => {
    let at = '';
    // Under /whole a registry whose card comes whole and whose answers are cut; under /cut, its card cut too.
    const cutting = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/gzip') return void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end('{"not":"gzip"}');
        const card = req.url!.endsWith('/.well-known/agent-card.json');
        const json = card ? JSON.stringify(v1Card('Cut Registry', `${at}/whole/a2a/jsonrpc`)) : `{"jsonrpc":"2.0","id":1,"result":{"padding":"${'x'.repeat(4000)}"}}`;
        res.writeHead(200, { 'content-type': 'application/json', ...(req.url!.endsWith('chunked') ? {} : { 'content-length': Buffer.byteLength(json) }) });
        if (card && req.url!.startsWith('/whole/')) return void res.end(json);
        res.write(json.slice(0, 100));
        setTimeout(() => res.socket?.destroy(), 20);
      });
    });
    await new Promise<void>((resolve) => cutting.listen(0, '127.0.0.1', resolve));
    at = `http://127.0.0.1:${(cutting.address() as AddressInfo).port}`;
    const cut = (url: string) => `cannot reach the registry at ${url}: the connection closed mid-answer (connection reset)`;
    try {
      const cliFetch = registryFetch({ url: at, tokenSource: 'none', timeoutMs: 5000 });
      for (const path of ['/cut/.well-known/agent-card.json', '/card-chunked']) {
        await assert.rejects(async () => (await cliFetch(`${at}${path}`)).json(), { constructor: RegistryUnreachable, message: cut(at) }, path);
      }
      for (const path of ['/a2a/jsonrpc', '/a2a/jsonrpc-chunked']) {
        await assert.rejects(async () => (await cliFetch(`${at}${path}`, { method: 'POST', body: '{}' })).json(), { constructor: RegistryUnreachable, message: cut(at) }, path);
      }
      await assert.rejects(async () => (await cliFetch(`${at}/gzip`)).json(), {
        constructor: RegistryUnreachable,
        message: `no A2A registry at ${at} (GET /gzip was answered gzip-compressed (Content-Encoding) with bytes that do not decode (incorrect header check)); check --registry or A2A_REGISTRY_URL, or the proxy in front of the registry`,
      });
      // Through the SDK, as a command meets it: it was "no A2A registry at … (aborted)", and for a
      // POST "the registry answered with an error: aborted" (exit 1).
      await assert.rejects(RegistryClient.connect({ url: `${at}/cut`, tokenSource: 'none', timeoutMs: 5000 }), { constructor: RegistryUnreachable, message: cut(`${at}/cut`) });
      const client = await RegistryClient.connect({ url: `${at}/whole`, tokenSource: 'none', timeoutMs: 5000 });
      await assert.rejects(client.send([dataPart({ get: { id: 'x' } })]), { constructor: RegistryUnreachable, message: cut(`${at}/whole`) });
    } finally {
      cutting.closeAllConnections();
      cutting.close();
    }
  });
  test('an answer longer than any registry\'s (MAX_ANSWER_BYTES, decoded) is not read past that, whether its Content-Length says so (not read at all) or it goes on: no registry there, exit 3, naming the bound', async () => {
    let at = '';
    /** Bytes the endless answer wrote, and whether the CLI went away from it. */
    const endless = { sent: 0, closed: false };
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url!.endsWith('/.well-known/agent-card.json')) {
          return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v1Card('Long Registry', `${at}/a2a/jsonrpc`)));
        }
        if (req.url === '/a2a/jsonrpc') {
          // It says more than the bound, sends a little and then nothing: it was waited on until the timeout, to be read whole.
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_ANSWER_BYTES + 1) });
          return void res.write('{"jsonrpc": "2.0", ');
        }
        // Chunked, 1 MiB at a time, until 16 MiB past the bound (read whole without it) or the CLI goes away.
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        res.on('close', () => (endless.closed = true));
        const more = (): void => {
          while (!endless.closed && endless.sent < MAX_ANSWER_BYTES + 16 * 1024 * 1024) {
            endless.sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          if (!endless.closed) res.end();
        };
        more();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    at = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const bound = `the 256 MiB (268,435,456 bytes) the CLI reads of an answer, more than any registry answers with`;
    try {
      // Through the SDK, as a command meets it.
      const client = await RegistryClient.connect({ url: at, tokenSource: 'none', timeoutMs: 5000 });
      await assert.rejects(client.send([dataPart({ get: { id: 'x' } })]), {
        constructor: RegistryUnreachable,
        message: `no A2A registry at ${at} (POST /a2a/jsonrpc was answered HTTP 200 OK, ${(MAX_ANSWER_BYTES + 1).toLocaleString('en-US')} bytes long (Content-Length), more than ${bound}); check --registry or A2A_REGISTRY_URL, or the proxy in front of the registry`,
      });
      // Read as the SDK reads a body, its chunks dropped as they come (this test holds none of them).
      const answer = await registryFetch({ url: at, tokenSource: 'none', timeoutMs: 30_000 })(`${at}/endless`);
      const reader = answer.body!.getReader();
      let read = 0;
      await assert.rejects(
        (async () => {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            read += value.byteLength;
          }
        })(),
        { constructor: RegistryUnreachable, message: `no A2A registry at ${at} (GET /endless was answered HTTP 200 OK, a body longer than ${bound}); check --registry or A2A_REGISTRY_URL, or the proxy in front of the registry` },
      );
      assert.ok(read <= MAX_ANSWER_BYTES, `${read} bytes handed on`);
      await eventually(async () => endless.closed, 'the connection closed');
      assert.ok(endless.sent < MAX_ANSWER_BYTES + 16 * 1024 * 1024, `${endless.sent} bytes sent: it was read to its end`);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
