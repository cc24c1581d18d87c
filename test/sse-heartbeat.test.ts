/**
 * A quiet SSE stream stays open: a watch with no event for longer than what sits between it and
 * its client lets a response idle (nginx 60 s, Node's fetch 300 s; here an undici client that
 * gives up after 2 s without a byte) still delivers its next event, because the registry sends a
 * `: keep-alive` comment while it is quiet (every REGISTRY_SSE_HEARTBEAT_SECONDS: 15 s by default,
 * half a second here so the test need not sit through the default). Real registry on 127.0.0.1,
 * the SDK's client.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, fetch as undiciFetch } from 'undici';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { dataPart, message, op, resultOf, streamEventJson, type WireJson } from './support/client.js';
import { sdkClient } from './support/client.js';
import { v1Card } from './support/documents.js';
import { TOKENS, removeTempDir, startTestRegistry, type TestRegistry } from './support/registry.js';

let registry: TestRegistry;
// Half a second: the quiet spell below is 2.5 s. Not shorter: the registry and the client share
// this process's event loop, and a stall as long as the client's limit (loaded CI) would cut the
// stream whatever the registry sent.
const HEARTBEAT_MS = 500;
/** How long the client's connection lets a response body go without a byte: a heartbeat is due within it. */
const CLIENT_IDLE_LIMIT_MS = 2 * HEARTBEAT_MS;

before(async () => {
  registry = await startTestRegistry({ REGISTRY_SSE_HEARTBEAT_SECONDS: String(HEARTBEAT_MS / 1000) });
});
after(async () => {
  await registry.close();
  removeTempDir(registry.dataDir);
});

test('a watch quiet for longer than the client lets a stream idle still delivers its next event (keep-alive comments)', { timeout: 60_000 }, async (t) => {
  const agent = new Agent({ bodyTimeout: CLIENT_IDLE_LIMIT_MS });
  t.after(() => agent.close());
  const fetchImpl = ((input: string | URL, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${TOKENS.bob}`);
    return undiciFetch(input, { ...(init as object), headers: Object.fromEntries(headers), dispatcher: agent });
  }) as unknown as typeof fetch;
  const bob = await new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }),
  ).createFromUrl(registry.url);

  const events: WireJson[] = [];
  let failure: unknown;
  const stream = (async () => {
    try {
      for await (const event of bob.sendMessageStream({ tenant: '', message: message([dataPart({ watch: { query: 'heartbeat' } })]), configuration: undefined, metadata: undefined })) {
        events.push(streamEventJson(event));
        if (JSON.stringify(event).includes('Heartbeat Agent')) return;
      }
    } catch (error) {
      failure = error;
    }
  })();

  // Quiet for twice the client's idle limit: without heartbeats the client's connection gives up
  // and the stream ends with an error.
  await new Promise((resolve) => setTimeout(resolve, 2 * CLIENT_IDLE_LIMIT_MS + HEARTBEAT_MS));
  assert.equal(failure, undefined, `the quiet stream was cut: ${String(failure)}`);
  assert.ok(events.some((e) => e.task), 'the watch started');

  const alice = await sdkClient(registry.url, { token: TOKENS.alice });
  const card = v1Card('Heartbeat Agent', 'https://heartbeat.example.org/a2a') as WireJson;
  card.skills[0].tags = ['heartbeat'];
  resultOf(await op(alice, { register: { agentCard: card } }));
  await stream;
  assert.equal(failure, undefined, String(failure));
  const added = events.find((e) => JSON.stringify(e).includes('Heartbeat Agent'));
  assert.ok(added?.artifactUpdate, 'the event after the quiet spell arrived on the same stream');
  const id = events.find((e) => e.task)!.task.id as string;
  await bob.cancelTask({ tenant: '', id, metadata: undefined });
});

test('a quiet stream keeps getting keep-alive comments when the wall clock steps back (NTP correcting a clock that ran ahead)', { timeout: 30_000 }, async (t) => {
  const controller = new AbortController();
  const res = await fetch(`${registry.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.bob}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { message: { messageId: 'stepped-back', role: 'ROLE_USER', parts: [{ data: { watch: { query: 'stepped back' } } }] } } }),
    signal: controller.signal,
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let received = '';
  let taskId: string | undefined;
  // The watch's first event (its task) has come: from here on the stream is quiet.
  while (!taskId) {
    const { value, done } = await reader.read();
    assert.ok(!done, 'the stream ended before its first event');
    received += decoder.decode(value, { stream: true });
    taskId = /"task":\{"id":"([^"]+)"/.exec(received)?.[1];
  }
  // The wall clock (Date.now) steps back an hour; the registry is in this process.
  const realNow = Date.now;
  Date.now = () => realNow() - 3_600_000;
  t.after(() => {
    Date.now = realNow;
    controller.abort();
  });
  received = '';
  const quiet = setTimeout(() => void reader.cancel(), 3 * HEARTBEAT_MS);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true });
      if (received.includes(': keep-alive')) break;
    }
  } finally {
    clearTimeout(quiet);
    Date.now = realNow;
  }
  assert.match(received, /: keep-alive/, `no keep-alive within ${3 * HEARTBEAT_MS} ms (heartbeat every ${HEARTBEAT_MS} ms) after the clock stepped back`);
  const bob = await sdkClient(registry.url, { token: TOKENS.bob });
  await bob.cancelTask({ tenant: '', id: taskId, metadata: undefined });
});
