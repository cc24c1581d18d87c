/**
 * Connection limits (issue 12, point 4), with raw sockets: a client that sends its body (or its
 * headers) a byte at a time is answered 408 and cut off within the request (headers) timeout;
 * an idle keep-alive connection is closed after the keep-alive timeout; connections beyond the
 * cap are dropped at once while those within it are served.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect } from './support/raw-connection.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

let registry: TestRegistry;
before(async () => {
  registry = await startTestRegistry({
    REGISTRY_REQUEST_TIMEOUT_SECONDS: '2',
    REGISTRY_HEADERS_TIMEOUT_SECONDS: '1',
    REGISTRY_KEEP_ALIVE_TIMEOUT_SECONDS: '1',
    REGISTRY_MAX_CONNECTIONS: '4',
  });
});
after(() => registry.close());

/** Writes `text` one byte every `everyMs` until the socket closes. */
function trickle(socket: net.Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(timer);
    socket.write(text[i++]!);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

describe('connection limits', () => {
  test('a body sent a byte at a time is cut off (408) within the request timeout', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'slow' }] } } });
    const c = await connect(registry.url);
    c.socket.write(`POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${body.length}\r\n\r\n`);
    trickle(c.socket, body, 250);
    const ms = await c.closed;
    assert.match(c.received(), /^HTTP\/1\.1 408/);
    // Cut off at the 2 s deadline (checked every 200 ms), long before the trickle would end
    // (~40 s); the upper bound leaves room for a loaded machine's late timers.
    assert.ok(ms >= 1500 && ms < 4000, `cut off after ${Math.round(ms)} ms`);
  });

  test('a request cut for its slow body on a reused keep-alive connection gets its 408 too, after the first answer', async () => {
    // The answer was written only on a connection that had written nothing: the second request was cut without a word.
    const c = await connect(registry.url);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    while (!c.received().includes('\r\n\r\n')) await new Promise((r) => setTimeout(r, 20));
    c.socket.write(`POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: 100\r\n\r\n{"jsonrpc"`);
    const ms = await c.closed;
    assert.match(c.received(), /^HTTP\/1\.1 200 [\s\S]*\r\n\r\n[\s\S]*HTTP\/1\.1 408 Request Timeout\r\nConnection: close\r\n\r\n$/);
    assert.ok(ms >= 1500 && ms < 4000, `cut off after ${Math.round(ms)} ms`);
  });

  test('headers sent a byte at a time are cut off within the headers timeout', async () => {
    const c = await connect(registry.url);
    trickle(c.socket, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n', 100);
    const ms = await c.closed;
    assert.match(c.received(), /^HTTP\/1\.1 408/);
    // At the 1 s headers deadline, long before the trickle would end (~8 s), with room for late timers.
    assert.ok(ms >= 600 && ms < 3000, `cut off after ${Math.round(ms)} ms`);
  });

  test('a URL and headers over the parser\'s limit get a 431 saying what to shorten, not a bare status line', async () => {
    // Node's own answer had no body: an A2A client read "Unexpected end of JSON input".
    const res = await fetch(`${registry.url}/a2a/rest/tasks?contextId=${'c'.repeat(20_000)}`, { headers: { 'A2A-Version': '1.0' } });
    assert.equal(res.status, 431);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await res.json()) as { error: { code: number; status: string; message: string } };
    assert.deepEqual([body.error.code, body.error.status], [431, 'INVALID_ARGUMENT']);
    assert.match(body.error.message, /^The request line \(URL\) and headers together exceed 16384 bytes.*Shorten the URL's query/);
    // Malformed HTTP is still Node's bare 400.
    const c = await connect(registry.url);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n');
    await c.closed;
    assert.match(c.received(), /^HTTP\/1\.1 400 Bad Request\r\nConnection: close\r\n\r\n$/);
  });

  test('a method Node does not know (BREW, get in lower case) is 501 saying which methods the routes take, not a bare 400, as CONNECT is; OPTIONS * lists them', async () => {
    for (const method of ['BREW', 'get']) {
      const c = await connect(registry.url);
      c.socket.write(`${method} /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await c.closed;
      const [head, body] = c.received().split('\r\n\r\n');
      assert.match(head!, /^HTTP\/1\.1 501 Not Implemented\r\n/, method);
      assert.match(head!, /\r\nContent-Type: application\/json/, method);
      assert.equal(head!.match(/\r\nContent-Length: (\d+)/)?.[1], String(Buffer.byteLength(body!)), method);
      const error = (JSON.parse(body!) as { error: { code: number; status: string; message: string } }).error;
      assert.deepEqual([error.code, error.status], [501, 'UNIMPLEMENTED'], method);
      assert.match(error.message, new RegExp(`^The method ${method} is not one this server implements: its routes take GET, HEAD, POST and DELETE`), method);
    }
    // CONNECT (a client whose proxy setting names the registry) was a connection closed without an answer.
    const tunnel = await connect(registry.url);
    tunnel.socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    await tunnel.closed;
    assert.match(tunnel.received(), /^HTTP\/1\.1 501 Not Implemented\r\n[\s\S]*"message":"CONNECT is not implemented: this server is an A2A registry, not a proxy\./);
    // OPTIONS * asks about the server itself (RFC 9110 9.3.7): its methods, where it was 404 "No route OPTIONS *".
    const server = await connect(registry.url);
    server.socket.write('OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await server.closed;
    assert.match(server.received(), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\nAllow: DELETE, GET, HEAD, POST\r\n/);
    // Bytes that are no request line (a TLS handshake on the plain port) are still Node's bare 400.
    const tls = await connect(registry.url);
    tls.socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
    tls.socket.end();
    await tls.closed;
    assert.match(tls.received(), /^HTTP\/1\.1 400 Bad Request\r\nConnection: close\r\n\r\n$/);
  });

  test('a request with two Host fields is 400 saying to send one (RFC 9112 3.2), not answered for the first of them', async () => {
    const c = await connect(registry.url);
    c.socket.write('GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: elsewhere.example\r\n\r\n');
    await c.closed;
    const [head, body] = c.received().split('\r\n\r\n');
    assert.match(head!, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(head!, /\r\nConnection: close\r\n/);
    const error = (JSON.parse(body!) as { error: { code: number; message: string } }).error;
    assert.equal(error.code, 400);
    assert.match(error.message, /^The request has 2 Host header fields; HTTP\/1\.1 takes exactly one/);
    // On the MCP endpoint and the ARD routes, in their own bindings (it was the A2A HTTP+JSON Status there too).
    const call = '{"jsonrpc":"2.0","id":7,"method":"tools/list"}';
    for (const [line, extra] of [
      ['POST /mcp', 'Accept: application/json, text/event-stream\r\n'],
      ['POST /search', ''],
    ] as const) {
      const d = await connect(registry.url);
      d.socket.write(`${line} HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: elsewhere.example\r\nContent-Type: application/json\r\n${extra}Content-Length: ${call.length}\r\n\r\n${call}`);
      await d.closed;
      const [answerHead, answerBody] = d.received().split('\r\n\r\n');
      assert.match(answerHead!, /^HTTP\/1\.1 400 Bad Request\r\n/, line);
      const answer = JSON.parse(answerBody!) as { jsonrpc?: string; error?: { code: number; message: string }; errorCode?: string; message?: string };
      if (line === 'POST /mcp') {
        assert.equal(answer.jsonrpc, '2.0', answerBody);
        assert.equal(answer.error?.code, -32600);
        assert.match(answer.error!.message, /2 Host header fields/);
      } else {
        assert.equal(answer.errorCode, 'INVALID_ARGUMENT', answerBody);
        assert.match(answer.message!, /2 Host header fields/);
      }
    }
  });

  test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const c = await connect(registry.url);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const ms = await c.closed;
    assert.match(c.received(), /^HTTP\/1\.1 200/);
    assert.match(c.received(), /Keep-Alive: timeout=1/);
    // After 1 s, well before Node's own 5 s default would close it (room for late timers).
    assert.ok(ms >= 900 && ms < 4000, `closed after ${Math.round(ms)} ms`);
  });

  test('an HTTP+JSON request refused for its method, path or credentials, and a JSON-RPC one for its method or path, is answered before its body arrives, not 408 once it has', async () => {
    // 60,000 bytes declared, none sent: each refusal needs no body.
    const head = (line: string, extra = '') => `${line} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n${extra}Content-Length: 60000\r\n\r\n`;
    const mistyped = `Authorization: Bearer ${TOKENS.alice.slice(0, -1)}X\r\n`;
    for (const [line, extra, status] of [
      ['PUT /a2a/rest/tasks', '', 405],
      ['POST /a2a/rest/tasks', '', 405],
      ['POST /a2a/rest/nowhere', '', 404],
      ['POST /a2a/rest/message:send', mistyped, 401],
      ['POST /a2a/rest/tenant-a/message:send', mistyped, 401],
      // JSON-RPC reads its body to name its refusals' id, but a method or path it does not take has none.
      ['PUT /a2a/jsonrpc', '', 405],
      ['POST /a2a/jsonrpc/nowhere', '', 404],
    ] as const) {
      const c = await connect(registry.url);
      c.socket.write(head(line, extra));
      const answered = await new Promise<number>((resolve) => {
        const check = () => c.received().includes('\r\n\r\n') && resolve(performance.now() - c.opened);
        c.socket.on('data', check);
        void c.closed.then(() => resolve(performance.now() - c.opened));
      });
      assert.match(c.received(), new RegExp(`^HTTP/1\\.1 ${status} `), `${line}: ${c.received().slice(0, 200)}`);
      // At once, not at the 2 s request timeout (with room for a loaded machine).
      assert.ok(answered < 1500, `${line} answered after ${Math.round(answered)} ms`);
      c.socket.destroy();
      await c.closed;
    }
  });

  test('connections beyond the cap are dropped at once; those within it are served', async () => {
    const held = await Promise.all(Array.from({ length: 4 }, () => connect(registry.url)));
    // Give the server a moment to count them (it accepts asynchronously).
    await new Promise((r) => setImmediate(r));
    const extra = await connect(registry.url);
    extra.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const ms = await extra.closed;
    assert.equal(extra.received(), '', 'the connection over the cap got no answer');
    assert.ok(ms < 2000, `dropped after ${Math.round(ms)} ms`);
    const served = held[0]!;
    served.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await served.closed;
    assert.match(served.received(), /^HTTP\/1\.1 200/);
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    // Room again once they are gone.
    const later = await fetch(`${registry.url}/healthz`);
    assert.equal(later.status, 200);
  });
});
