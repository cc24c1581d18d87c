/**
 * Abuse control over the real server: write and read budgets per principal and per address
 * (REJECTED tasks with RATE_LIMITED and retryAfterSeconds, nothing stored), the flood guard in
 * front of everything (HTTP 429 + Retry-After in both bindings), and the cap on concurrent
 * streams. Client addresses are simulated with X-Forwarded-For (REGISTRY_TRUST_PROXY=loopback).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { Message } from '@a2a-js/sdk';
import { ConfigError, loadConfig } from '../src/config/config.js';
import { clientAddress, compileTrust } from '../src/grpc/client-address.js';
import { limitedClient } from '../src/http/client-network.js';
import { retryDelay } from '../src/cli/watch-renewal.js';
import { v1Card } from './support/documents.js';
import { sendEndlessBody } from './support/raw-connection.js';
import type { WireJson } from './support/client.js';
import { TOKENS, TOKENS_ENV, startTestRegistry, type TestRegistry } from './support/registry.js';
import { assertNoInternals, assertWellFormedJsonRpcAnswer, rawPost, sendMessageBody, type RawAnswer } from './support/raw-http.js';
import { webhook, type Hook } from './support/watch-stream.js';
import { errorInfoOf, metadata as grpcMetadata, RawA2AClient, retryInfoOf } from './support/grpc.js';
import { heapAfterGc } from './support/heap.js';

let registry: TestRegistry;
const CAROL = 'carol-token-0123456789abcdef';
let n = 0;

const from = (address: string, token?: string): Record<string, string> => ({
  'x-forwarded-for': address,
  ...(token ? { authorization: `Bearer ${token}` } : {}),
});
const rpc = (body: string, headers: Record<string, string>) => rawPost(`${registry.url}/a2a/jsonrpc`, body, { headers });
const op = (data: unknown, headers: Record<string, string>, method = 'SendMessage') =>
  rpc(sendMessageBody([{ data, mediaType: 'application/json' }], ++n, method), headers);
const register = (headers: Record<string, string>) =>
  op({ register: { agentCard: v1Card(`Limited ${++n}`, `https://limited-${n}.example.org/a2a`) } }, headers);

function stateOf(answer: RawAnswer): string {
  assertWellFormedJsonRpcAnswer(answer, 'SendMessage');
  return answer.json!.result?.task?.status?.state ?? `error ${answer.json!.error?.code}`;
}
function rateLimited(answer: RawAnswer): WireJson {
  assert.equal(stateOf(answer), 'TASK_STATE_REJECTED', answer.text.slice(0, 300));
  const parts = answer.json!.result.task.status.message.parts;
  const error = parts.find((p: WireJson) => p.data).data.error;
  assert.equal(error.code, 'RATE_LIMITED');
  assert.ok(Number.isInteger(error.retryAfterSeconds) && error.retryAfterSeconds >= 1 && error.retryAfterSeconds <= 60, String(error.retryAfterSeconds));
  assert.match(error.message, /Retry after \d+ s/);
  assert.ok(parts.some((p: WireJson) => typeof p.text === 'string' && p.text.startsWith('RATE_LIMITED')), 'parts.some((p: WireJson) => typeof p.text === \'string\' && p.text.startsWith(\'RATE_LIMITED\'))');
  return error;
}

before(async () => {
  registry = await startTestRegistry({
    // The proxies by address (the test's peer is 127.0.0.1): see the REGISTRY_TRUST_PROXY test.
    REGISTRY_TRUST_PROXY: 'loopback',
    REGISTRY_TOKENS: `${TOKENS_ENV},carol:${CAROL}`,
    REGISTRY_RATE_WRITES_PER_MINUTE: '3',
    REGISTRY_RATE_READS_PER_MINUTE: '5',
    REGISTRY_RATE_REQUESTS_PER_MINUTE: '40',
    REGISTRY_MAX_STREAMS_PER_CLIENT: '2',
  });
});
after(() => registry.close());

describe('operation budgets', () => {
  test('writes: per principal and per address, REJECTED with RATE_LIMITED, nothing stored', async () => {
    for (let i = 0; i < 3; i++) assert.equal(stateOf(await register(from('10.0.0.1', TOKENS.alice))), 'TASK_STATE_COMPLETED');
    const before = await registry.store.count();
    const seq = await registry.store.lastChangeSeq();

    // alice has used her budget: refused from her address and from any other.
    assert.match(rateLimited(await register(from('10.0.0.1', TOKENS.alice))).message, /from this principal/);
    assert.match(rateLimited(await register(from('10.0.0.2', TOKENS.alice))).message, /from this principal/);
    // bob has not, but 10.0.0.1 has: refused by address there, accepted elsewhere.
    assert.match(rateLimited(await register(from('10.0.0.1', TOKENS.bob))).message, /from this address/);
    assert.deepEqual(await registry.store.count(), before, 'refused registrations store nothing');
    assert.equal(await registry.store.lastChangeSeq(), seq);
    assert.equal(stateOf(await register(from('10.0.0.3', TOKENS.bob))), 'TASK_STATE_COMPLETED');
    // A refusal by 10.0.0.1's budget costs the principal nothing: carol still has her three writes
    // (it spent one of hers first, so a busy address drained its principals' budgets everywhere).
    assert.match(rateLimited(await register(from('10.0.0.1', CAROL))).message, /from this address/);
    for (const address of ['10.0.0.4', '10.0.0.5', '10.0.0.6']) assert.equal(stateOf(await register(from(address, CAROL))), 'TASK_STATE_COMPLETED', address);
    assert.match(rateLimited(await register(from('10.0.0.7', CAROL))).message, /from this principal/);
    // unregister is a write too.
    assert.equal(rateLimited(await op({ unregister: { id: 'x' } }, from('10.0.0.1', TOKENS.alice))).code, 'RATE_LIMITED');
    // The operator (admin token) is not limited.
    assert.equal(stateOf(await register(from('10.0.0.1', TOKENS.admin))), 'TASK_STATE_COMPLETED');
  });

  test('a2a-registry watch retries a renewal refused over the write budget no sooner than the refusal says, while the watch has time', () => {
    // 20 s of the watch's time left: retried at half of it, or after the 15 s a rate limit said
    // (retried at 10 s, it was refused again), never past the watch's time.
    assert.equal(retryDelay(20_000), 10_000);
    assert.equal(retryDelay(20_000, 15), 15_000);
    assert.equal(retryDelay(20_000, 45), 19_900);
    // A day left: a minute on at most, which a budget's minute never outlasts.
    assert.equal(retryDelay(86_400_000, 30), 60_000);
    assert.equal(retryDelay(50, 30), undefined, 'its time is up');
  });

  describe('watches', () => {
    // A registry of its own: this file's principals have spent their write budgets above. Carol
    // is a third principal, whose budget is left when an address's is spent.
    let limited: TestRegistry;
    let hook: Hook;
    let grpcClient: RawA2AClient;
    before(async () => {
      limited = await startTestRegistry({
        REGISTRY_TRUST_PROXY: 'loopback',
        REGISTRY_TOKENS: `${TOKENS_ENV},carol:${CAROL}`,
        REGISTRY_RATE_WRITES_PER_MINUTE: '2',
        REGISTRY_RATE_READS_PER_MINUTE: '100',
        REGISTRY_FETCH_ALLOW: '127.0.0.1',
        GRPC_PORT: '0',
      });
      hook = await webhook(() => 200);
      grpcClient = new RawA2AClient(`127.0.0.1:${limited.grpcUrl!.split(':').at(-1)}`);
    });
    after(async () => {
      grpcClient.close();
      await hook.close();
      await limited.close();
    });
    const send = (headers: Record<string, string>, data: unknown, configuration?: unknown, taskId?: string) =>
      rawPost(
        `${limited.url}/a2a/jsonrpc`,
        JSON.stringify({ jsonrpc: '2.0', id: ++n, method: 'SendMessage', params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ data, mediaType: 'application/json' }], taskId }, configuration } }),
        { headers },
      );
    const startWatch = (headers: Record<string, string>) =>
      send(headers, { watch: { query: 'limited', initial: false } }, { returnImmediately: true, taskPushNotificationConfig: { url: hook.url, token: 'hook-token' } });

    test('a watch is a write: starting one draws from the write budget, shared with registrations, not from the reads', async () => {
      const alice = { authorization: `Bearer ${TOKENS.alice}` };
      const watching = await startWatch(alice);
      assert.equal(watching.json?.result?.task?.status?.state, 'TASK_STATE_WORKING', watching.text.slice(0, 300));
      assert.equal(stateOf(await send(alice, { register: { agentCard: v1Card('Limited Watcher', 'https://limited-watcher.example.org/a2a') } })), 'TASK_STATE_COMPLETED');
      // Before, a watch counted as a read (6,000 a minute): one principal started and canceled
      // 1,240 in 20 s, each leaving its task (with ~48 KB of matches) for a week.
      const refused = rateLimited(await startWatch(alice));
      assert.match(refused.message, /^Too many writes \(register, unregister, refresh, watch, renew\) from this principal: the limit is 2 per minute \(REGISTRY_RATE_WRITES_PER_MINUTE\)\. Retry after \d+ s\.$/);
      assert.equal(rateLimited(await send(alice, { register: { agentCard: v1Card('Limited Late', 'https://limited-late.example.org/a2a') } })).code, 'RATE_LIMITED');
      // Reads have their own budget still.
      assert.equal(stateOf(await send(alice, { search: { query: 'limited' } })), 'TASK_STATE_COMPLETED');
      assert.equal(limited.core.watches.countFor('alice'), 1, 'the refused watch was not started');
    });

    test('a renewal is a write: counted per principal and per address once it would be carried out; over the budget it is refused as a protocol error (JSON-RPC v1.0 and v0.3, HTTP+JSON, gRPC) and the watch runs on unchanged', async () => {
      const bob = from('10.0.9.1', TOKENS.bob);
      const started = await startWatch(bob); // bob's first write, and 10.0.9.1's
      const id: string = started.json?.result?.task?.id;
      assert.ok(id, started.text.slice(0, 300));
      const renew = (headers: Record<string, string>, taskId = id, args: unknown = {}) => send(headers, { renew: args }, undefined, taskId);

      // Refused for what they are, they write nothing and cost nothing: more of them than the budget has left.
      assert.equal((await renew(bob, id, { ttlSeconds: 60 })).json?.error?.code, -32602, 'malformed');
      assert.equal((await renew(bob, 'no-such-task')).json?.error?.code, -32001, 'unknown task');
      const searched: string = (await send(bob, { search: { query: 'limited' } })).json?.result?.task?.id;
      assert.equal((await renew(bob, searched)).json?.error?.code, -32004, 'finished task');
      const renewed = await renew(bob); // bob's second write, and the address's
      const expiresAt: string = renewed.json?.result?.task?.metadata?.watchExpiresAt;
      assert.ok(expiresAt, `the renewal within the budget renews: ${renewed.text.slice(0, 300)}`);

      // Over it: JSON-RPC -32603 with the ErrorInfo, HTTP 429 + Retry-After as the flood guard's.
      const refused = await renew(bob);
      const error = refused.json?.error;
      assert.equal(error?.code, -32603, refused.text.slice(0, 400));
      assert.equal(refused.status, 429);
      const why = new RegExp(`^The watch was not renewed and runs unchanged until ${expiresAt.replace(/\./g, '\\.')}: a renewal is a write, counted against the write budget\\. Too many writes \\(register, unregister, refresh, watch, renew\\) from this principal: the limit is 2 per minute \\(REGISTRY_RATE_WRITES_PER_MINUTE\\)\\. Retry after \\d+ s\\.$`);
      assert.match(error.message, why);
      assert.deepEqual({ ...error.data[0], metadata: undefined }, { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMITED', domain: 'a2a-registry', metadata: undefined });
      const seconds = Number(error.data[0].metadata.retryAfterSeconds);
      assert.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= 60, String(seconds));
      assert.equal(refused.headers.get('retry-after'), String(seconds));

      // v0.3 JSON-RPC: the SDK's converter drops the ErrorInfo; it is restored, not scrubbed.
      const legacy = await rawPost(
        `${limited.url}/a2a/jsonrpc`,
        JSON.stringify({ jsonrpc: '2.0', id: ++n, method: 'message/send', params: { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', taskId: id, parts: [{ kind: 'data', data: { renew: {} } }] } } }),
        { headers: { ...bob, 'A2A-Version': '' } },
      );
      assert.equal(legacy.json?.error?.code, -32603, legacy.text.slice(0, 400));
      assert.match(legacy.json.error.message, why);
      assert.equal(legacy.json.error.data?.[0]?.reason, 'RATE_LIMITED');
      assert.match(String(legacy.json.error.data[0].metadata?.retryAfterSeconds), /^\d+$/);
      assert.equal(legacy.status, 429);

      // HTTP+JSON: 429, RESOURCE_EXHAUSTED, Retry-After and the same ErrorInfo.
      const rest = await rawPost(
        `${limited.url}/a2a/rest/message:send`,
        JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', taskId: id, parts: [{ data: { renew: {} }, mediaType: 'application/json' }] } }),
        { headers: bob },
      );
      assert.equal(rest.status, 429, rest.text.slice(0, 400));
      assert.equal(rest.json?.error?.status, 'RESOURCE_EXHAUSTED');
      assert.match(rest.json.error.message, why);
      assert.equal(rest.json.error.details[0].reason, 'RATE_LIMITED');
      assert.equal(rest.json.error.details[0].domain, 'a2a-registry');
      assert.equal(rest.headers.get('retry-after'), rest.json.error.details[0].metadata.retryAfterSeconds);

      // gRPC: RESOURCE_EXHAUSTED with ErrorInfo, RetryInfo and a retry-after trailer.
      const renewal = { tenant: '', message: Message.fromJSON({ messageId: crypto.randomUUID(), role: 'ROLE_USER', taskId: id, parts: [{ data: { renew: {} } }] }), configuration: undefined, metadata: undefined };
      const overGrpc = (await grpcClient.unary('sendMessage', renewal, grpcMetadata({ authorization: `Bearer ${TOKENS.bob}`, 'x-forwarded-for': '10.0.9.1' }))).error;
      assert.equal(overGrpc?.code, grpc.status.RESOURCE_EXHAUSTED, overGrpc?.details);
      assert.match(overGrpc!.details, why);
      assert.equal(errorInfoOf(overGrpc!)?.reason, 'RATE_LIMITED');
      const grpcSeconds = retryInfoOf(overGrpc!);
      assert.ok(grpcSeconds !== undefined && grpcSeconds >= 1, String(grpcSeconds));
      assert.deepEqual(overGrpc!.metadata.get('retry-after'), [String(grpcSeconds)]);
      assert.equal(errorInfoOf(overGrpc!)?.metadata.retryAfterSeconds, String(grpcSeconds));

      // Counted as refusals, as the flood guard's are, not as errors.
      const scrape = await (await fetch(`${limited.url}/metrics`)).text();
      const refusals = scrape.split('\n').filter((line) => line.startsWith('registry_requests_total{') && line.includes('outcome="REFUSED",code="RATE_LIMITED"'));
      assert.deepEqual(refusals.map((line) => /door="(\w+)"/.exec(line)?.[1]).sort(), ['a2a', 'a2a', 'a2a', 'grpc'], refusals.join('\n'));

      // The watch runs on, its expiry and task as the last renewal that took left them.
      assert.ok(limited.core.watches.get(id)?.isOpen, 'the watch still runs');
      const task = await rawPost(`${limited.url}/a2a/jsonrpc`, JSON.stringify({ jsonrpc: '2.0', id: ++n, method: 'GetTask', params: { id } }), { headers: bob });
      assert.equal(task.json?.result?.status?.state, 'TASK_STATE_WORKING', task.text.slice(0, 300));
      assert.equal(task.json.result.metadata.watchExpiresAt, expiresAt);

      // Per address: carol has budget left, 10.0.9.1 has not. The operator is exempt.
      const carolWatch: string = (await startWatch(from('10.0.9.2', CAROL))).json?.result?.task?.id;
      assert.ok(carolWatch);
      const byAddress = await renew(from('10.0.9.1', CAROL), carolWatch);
      assert.match(byAddress.json?.error?.message ?? byAddress.text, /Too many writes .* from this address: /);
      const admin = from('10.0.9.1', TOKENS.admin);
      const adminWatch: string = (await startWatch(admin)).json?.result?.task?.id;
      for (let i = 0; i < 3; i++) assert.ok((await renew(admin, adminWatch)).json?.result?.task?.metadata?.watchExpiresAt, `the operator's renewal ${i + 1}`);
    });
  });

  test('reads: search, get, list and validate share a budget per address (anonymous) and per principal', async () => {
    const anon = from('10.0.1.1');
    const reads = [{ search: { query: 'x' } }, { list: {} }, { get: { id: 'nope' } }, { validate: { agentCard: v1Card() } }, { search: {} }];
    for (const data of reads) assert.notEqual(stateOf(await op(data, anon)), 'error', JSON.stringify(data));
    rateLimited(await op({ search: { query: 'x' } }, anon));
    rateLimited(await rpc(sendMessageBody([{ text: 'weather' }]), anon)); // a text-only search counts too
    // Streaming answers are refused the same way, as the stream's terminal event.
    const streamed = await op({ search: { query: 'x' } }, anon, 'SendStreamingMessage');
    assertWellFormedJsonRpcAnswer(streamed, 'SendStreamingMessage');
    const last = streamed.events!.at(-1)!;
    assert.equal(last.result.statusUpdate.status.state, 'TASK_STATE_REJECTED');
    // Writes have their own budget: a read-limited address can still register.
    assert.equal(stateOf(await register(from('10.0.1.1', TOKENS.bob))), 'TASK_STATE_COMPLETED');
    // Another address is not affected.
    assert.equal(stateOf(await op({ search: { query: 'x' } }, from('10.0.1.2'))), 'TASK_STATE_COMPLETED');
  });
  test('an address new in its minute costs its key, not its request: an answered request, its body and scope, is let go at once', async (t) => {
    let address = 0;
    // `padBytes` of the request's metadata, parsed anew by the server for each request, from an address of its own.
    const search = (padBytes: number) => {
      const body = JSON.parse(sendMessageBody([{ text: 'nothing here' }], ++n)) as WireJson;
      body.params.metadata = { pad: 'x'.repeat(padBytes) };
      const i = ++address;
      return rpc(JSON.stringify(body), from(`10.9.${i >> 8}.${i & 255}`));
    };
    // What 60 answered searches from new addresses leave (their tasks, the addresses' keys), then the same with 48 KB more each.
    const growth = async (padBytes: number) => {
      const before = heapAfterGc();
      for (let i = 0; i < 60; i++) assert.equal(stateOf(await search(padBytes)), 'TASK_STATE_COMPLETED');
      return heapAfterGc() - before;
    };
    await growth(0);
    const held = (await growth(48 * 1024)) - (await growth(0));
    t.diagnostic(`60 searches of 48 KB from new addresses hold ${(held / 1e6).toFixed(2)} MB more than 60 small ones`);
    // Each new key's timer kept its request's scope, and through it the request and its body, for
    // the budget's minute: 2.8 MB more here.
    assert.ok(held < 1e6, `60 searches of 48 KB from new addresses hold ${(held / 1e6).toFixed(2)} MB more than 60 small ones`);
  });
});

describe('flood guard', () => {
  test('/readyz, open to anyone and outside the budget, asks storage once at a time however many probe it (each asked it: on PostgreSQL a pool query apiece)', async () => {
    const store = registry.store;
    const ping = store.ping.bind(store);
    let pings = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let secondPing!: () => void;
    const second = new Promise<void>((resolve) => (secondPing = resolve));
    let firstPing!: () => void;
    const first = new Promise<void>((resolve) => (firstPing = resolve));
    store.ping = async () => {
      pings++;
      if (pings === 1) firstPing();
      if (pings === 2) secondPing();
      await held;
      return ping();
    };
    try {
      const probes = Array.from({ length: 20 }, () => fetch(`${registry.url}/readyz`));
      await first;
      // A second check would start at once (the old code ran one per request); none may while the first runs.
      await Promise.race([second, new Promise((resolve) => setTimeout(resolve, 300))]);
      const whileHeld = pings;
      release();
      const answers = await Promise.all(probes);
      assert.deepEqual(answers.map((a) => a.status), Array(20).fill(200));
      assert.equal(whileHeld, 1, 'one readiness check at a time');
    } finally {
      release();
      store.ping = ping;
    }
  });


  test('over REGISTRY_RATE_REQUESTS_PER_MINUTE an address gets HTTP 429 + Retry-After before any parsing', async () => {
    const flood = from('10.0.2.1');
    const getTask = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'nope' } });
    const answers = await Promise.all(Array.from({ length: 40 }, () => rpc(getTask, flood)));
    assert.ok(answers.every((a) => a.status === 200 && a.json!.error.code === -32001), 'the first 40 are served');
    const refused = await rpc(getTask, flood);
    assert.equal(refused.status, 429);
    const retry = Number(refused.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 60, String(retry));
    assertWellFormedJsonRpcAnswer(refused, 'GetTask');
    // Error details as A2A 9.5 has them: an array of typed objects, the retry time in the ErrorInfo's metadata.
    assert.deepEqual(refused.json!.error.data, [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMITED', domain: 'a2a-registry', metadata: { retryAfterSeconds: String(retry) } },
    ]);
    assert.match(refused.json!.error.message, /Too many requests/);
    // With a request id, as every other answer (it had none: a client reporting it named nothing the log knows).
    assert.match(refused.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    // Garbage is refused too, without being parsed.
    assert.equal((await rpc('{"not json', flood)).status, 429);
    const rest = await rawPost(`${registry.url}/a2a/rest/message:send`, '{}', { headers: { ...flood, 'x-request-id': 'flooded-rest-1' } });
    assert.equal(rest.status, 429);
    assert.equal(rest.headers.get('x-request-id'), 'flooded-rest-1', "the client's own id is echoed");
    assert.equal(rest.json!.error.status, 'RESOURCE_EXHAUSTED');
    assert.ok(rest.headers.get('retry-after'), 'rest.headers.get(\'retry-after\')');
    assertNoInternals(refused.text + rest.text);
    // So do paths no door takes (a scanner's): they were answered 404 without limit.
    const scan = await fetch(`${registry.url}/.env`, { headers: flood });
    assert.equal(scan.status, 429, 'a path scan is refused to a flooding address');
    assert.ok(scan.headers.get('retry-after'), 'scan.headers.get(\'retry-after\')');
    assert.ok(scan.headers.get('x-request-id'), 'a refused path scan has a request id');
    // So does an MCP request the DNS-rebinding check refuses: each is logged, and was not counted,
    // so one address could write log lines without limit.
    const rebound = await rawPost(`${registry.url}/mcp`, '{"jsonrpc":"2.0","id":1,"method":"ping"}', {
      headers: { ...flood, origin: 'https://attacker.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    assert.equal(rebound.status, 429, 'a refused rebinding attempt from a flooding address');
    // The web page counts too (built or not; its assets share the guard).
    const page = await fetch(`${registry.url}/`, { headers: { ...flood, accept: 'text/html' } });
    assert.equal(page.status, 429, 'the web page is refused to a flooding address');
    assert.ok(page.headers.get('retry-after'), 'page.headers.get(\'retry-after\')');
    assert.ok(page.headers.get('x-request-id'), 'a refused page has a request id');
    assert.notEqual((await fetch(`${registry.url}/`, { headers: { ...from('10.0.2.2'), accept: 'text/html' } })).status, 429);
    // So does /metrics: it took any number of guesses at a closed registry's admin token (or
    // REGISTRY_METRICS_TOKEN). A scraper counts as any caller; with the admin token, not at all.
    const scrape = await fetch(`${registry.url}/metrics`, { headers: flood });
    assert.equal(scrape.status, 429, 'a scrape is refused to a flooding address');
    assert.ok(scrape.headers.get('retry-after'), 'scrape.headers.get(\'retry-after\')');
    assert.equal((await fetch(`${registry.url}/metrics`, { headers: from('10.0.2.1', TOKENS.admin) })).status, 200);
    assert.equal((await fetch(`${registry.url}/metrics`, { headers: from('10.0.2.2') })).status, 200);
    // Other addresses, the card and health checks are unaffected.
    assert.equal((await rpc(getTask, from('10.0.2.2'))).status, 200);
    assert.equal((await fetch(`${registry.url}/healthz`, { headers: flood })).status, 200);
    assert.equal((await fetch(`${registry.url}/.well-known/agent-card.json`, { headers: flood })).status, 200);
  });

  test('an IPv6 client is its /56 network: its many addresses share one budget, named in the refusal; an IPv4-mapped peer is its IPv4 address', async () => {
    const getTask = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'nope' } });
    // 40 addresses of one /56 (its last 8 prefix bits, the /64s in it, and the interface ids all differ),
    // written in every spelling an address has: one budget of 40 between them.
    const spellings = (i: number) => [`2001:db8:7:1${(i % 256).toString(16).padStart(2, '0')}:${i}::${i + 1}`, `2001:0DB8:0007:01${(i % 256).toString(16).padStart(2, '0')}:0:0:0:${i + 1}`];
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => rpc(getTask, from(spellings(i * 5)[i % 2]!))));
    assert.deepEqual(answers.map((a) => a.status), Array(40).fill(200));
    const refused = await rpc(getTask, from('2001:db8:7:1ff:ffff:ffff:ffff:fffe'));
    assert.equal(refused.status, 429, 'a 41st address of the same /56 is over its budget');
    assert.match(refused.json!.error.message, /^Too many requests from this network \(2001:db8:7:100::\/56\): the limit is 40 per minute/);
    // The next /56, and a /48 neighbour's, have budgets of their own.
    assert.equal((await rpc(getTask, from('2001:db8:7:200::1'))).status, 200);
    assert.equal((await rpc(getTask, from('2001:db8:8:100::1'))).status, 200);
    // A dual-stack socket's spelling of an IPv4 peer is that peer: one budget whichever way it comes.
    const mapped = await Promise.all(Array.from({ length: 20 }, () => rpc(getTask, from('::ffff:10.0.9.1'))));
    const plain = await Promise.all(Array.from({ length: 20 }, () => rpc(getTask, from('10.0.9.1'))));
    assert.deepEqual([...mapped, ...plain].map((a) => a.status), Array(40).fill(200));
    const over = await rpc(getTask, from('::ffff:10.0.9.1'));
    assert.equal(over.status, 429);
    assert.match(over.json!.error.message, /^Too many requests from this address:/);
    // Other prefixes, as REGISTRY_RATE_IPV6_PREFIX sets them: 128 is each address alone, in one spelling.
    assert.equal(limitedClient('2001:0DB8::00A1', 128), '2001:db8::a1');
    assert.equal(limitedClient('2001:db8:7:1ff:1:2:3:4', 64), '2001:db8:7:1ff::/64');
    assert.equal(limitedClient('2001:db8:7fff::1', 33), '2001:db8::/33');
    assert.equal(limitedClient('unknown', 56), 'unknown');
    // Only global unicast is grouped: a cluster's or a LAN's hosts (unique local, link-local,
    // loopback) are hosts one by one, often a node's pods in one /64.
    assert.equal(limitedClient('fd00:10:244:1::7', 56), 'fd00:10:244:1::7');
    assert.equal(limitedClient('fe80::1', 56), 'fe80::1');
    assert.equal(limitedClient('::1', 56), '::1');
    assert.equal(loadConfig({}).hardening.ipv6Prefix, 56);
    assert.throws(() => loadConfig({ REGISTRY_RATE_IPV6_PREFIX: '16' }), (err: unknown) =>
      err instanceof ConfigError && /REGISTRY_RATE_IPV6_PREFIX/.test(err.message) && /from 32 to 128/.test(err.message));
  });

  test('a body that never ends, on a request answered unread (429 here, 404), is not read without limit: the connection closes', async () => {
    // Node discards the rest of an unread body to keep the connection: it read an endless one
    // until the request timeout (30 s). Past the largest body the registry accepts, it closes.
    const getTask = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'nope' } });
    await Promise.all(Array.from({ length: 40 }, () => rpc(getTask, from('10.0.2.4')))); // the address's budget spent
    for (const [path, address, status] of [['/a2a/jsonrpc', '10.0.2.4', 429], ['/no-such-path', '10.0.2.3', 404]] as const) {
      const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: ${address}\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nTransfer-Encoding: chunked\r\n\r\n`;
      const endless = await sendEndlessBody(registry.url, head, 3_000);
      assert.ok(endless.closed, `${path}: the connection was closed`);
      assert.match(endless.received, new RegExp(`^HTTP/1\\.1 ${status} `), `${path}: ${endless.received.slice(0, 80)}`);
    }
  });

  test('the operator\'s admin token is not flood-limited', async () => {
    const admin = from('10.0.2.1', TOKENS.admin); // the address refused above
    const answer = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'nope' } }), admin);
    assert.equal(answer.status, 200);
  });
});

describe('concurrent streams', () => {
  test('at most REGISTRY_MAX_STREAMS_PER_CLIENT open streams per address; a closed stream frees its slot', async () => {
    // Hold streams open: make `get` wait until released (the stream lasts as long as its operation).
    const store = registry.store;
    const originalGet = store.get.bind(store);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    store.get = async (...args: Parameters<typeof store.get>) => {
      await gate;
      return originalGet(...args);
    };
    try {
      const client = from('10.0.3.1', TOKENS.admin); // admin: not read-limited, still stream-capped
      const held = [op({ get: { id: 'a' } }, client, 'SendStreamingMessage'), op({ get: { id: 'b' } }, client, 'SendStreamingMessage')];
      await waitFor(async () => (await metricValue('registry_open_streams', '')) === 2);
      const third = await op({ get: { id: 'c' } }, client, 'SendStreamingMessage');
      assert.equal(third.status, 429);
      assert.ok(third.headers.get('retry-after'), 'third.headers.get(\'retry-after\')');
      assertWellFormedJsonRpcAnswer(third, 'SendStreamingMessage');
      assert.equal(third.json!.error.data[0].reason, 'TOO_MANY_STREAMS');
      assert.match(third.json!.error.message, /limit is 2/);
      // Blocking requests are not streams; other addresses have their own slots.
      const other = op({ get: { id: 'd' } }, from('10.0.3.2', TOKENS.admin), 'SendStreamingMessage');
      await waitFor(async () => (await metricValue('registry_open_streams', '')) === 3);
      release();
      for (const answer of [...(await Promise.all(held)), await other]) {
        assertWellFormedJsonRpcAnswer(answer, 'SendStreamingMessage');
        assert.equal(answer.events!.at(-1)!.result.statusUpdate.status.state, 'TASK_STATE_REJECTED'); // NOT_FOUND
      }
      await waitFor(async () => (await metricValue('registry_open_streams', '')) === 0);
      const again = await op({ get: { id: 'e' } }, client, 'SendStreamingMessage');
      assert.equal(again.status, 200);
    } finally {
      release();
      store.get = originalGet;
    }
  });
});

test('refusals are counted in /metrics', async () => {
  assert.ok((await metricValue('registry_rate_limited_total', 'limit="writes",by="principal"')) >= 3, '(await metricValue(\'registry_rate_limited_total\', \'limit="writes",by="principal"\')) >= 3');
  assert.ok((await metricValue('registry_rate_limited_total', 'limit="writes",by="address"')) >= 1, '(await metricValue(\'registry_rate_limited_total\', \'limit="writes",by="address"\')) >= 1');
  assert.ok((await metricValue('registry_rate_limited_total', 'limit="reads",by="address"')) >= 3, '(await metricValue(\'registry_rate_limited_total\', \'limit="reads",by="address"\')) >= 3');
  assert.ok((await metricValue('registry_rate_limited_total', 'limit="requests",by="address"')) >= 3, '(await metricValue(\'registry_rate_limited_total\', \'limit="requests",by="address"\')) >= 3');
  assert.ok((await metricValue('registry_rate_limited_total', 'limit="streams",by="address"')) >= 1, '(await metricValue(\'registry_rate_limited_total\', \'limit="streams",by="address"\')) >= 1');
  assert.ok((await metricValue('registry_requests_total', 'outcome="REJECTED",code="RATE_LIMITED"')) >= 1, '(await metricValue(\'registry_requests_total\', \'outcome="REJECTED",code="RATE_LIMITED"\')) >= 1');
  assert.ok((await metricValue('registry_requests_total', 'outcome="REFUSED",code="RATE_LIMITED"')) >= 1, '(await metricValue(\'registry_requests_total\', \'outcome="REFUSED",code="RATE_LIMITED"\')) >= 1');
});

test('REGISTRY_RATE_LIMITS=false turns every limit off', async () => {
  const open = await startTestRegistry({ REGISTRY_RATE_LIMITS: 'false', REGISTRY_RATE_WRITES_PER_MINUTE: '1', REGISTRY_RATE_REQUESTS_PER_MINUTE: '1' });
  try {
    for (let i = 0; i < 3; i++) {
      const answer = await rawPost(`${open.url}/a2a/jsonrpc`, sendMessageBody([{ data: { register: { agentCard: v1Card(`Free ${i}`, `https://free-${i}.example.org/a2a`) } }, mediaType: 'application/json' }]), {
        headers: { authorization: `Bearer ${TOKENS.alice}` },
      });
      assert.equal(answer.json!.result.task.status.state, 'TASK_STATE_COMPLETED');
    }
  } finally {
    await open.close();
  }
});

test('REGISTRY_TRUST_PROXY naming the proxies (loopback here): what a client wrote into X-Forwarded-For before a trusted proxy is ignored (HTTP and gRPC); a bad entry is a clear config error', async () => {
  // A hop count trusts whichever peer connects: a client reaching the registry directly got a
  // fresh budget per made-up address. Named proxies are believed, nobody else: the proxy
  // (127.0.0.1) reports 10.0.4.1 as its peer, whose own "203.0.113.x" is not believed.
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await fetch(`${registry.url}/agents`, { headers: { 'x-forwarded-for': `203.0.113.${i}, 10.0.4.1` } })).status);
  assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429], 'six made-up addresses are one client with a budget of 5 reads');
  // The gRPC door reads x-forwarded-for by the same rule: a peer that is not a named proxy is the client.
  assert.equal(clientAddress('127.0.0.1', ['203.0.113.9'], compileTrust(['192.0.2.0/24'])), '127.0.0.1');
  assert.equal(clientAddress('192.0.2.4', ['203.0.113.9'], compileTrust(['192.0.2.0/24'])), '203.0.113.9');
  assert.equal(clientAddress('127.0.0.1', ['203.0.113.9, 10.0.4.1'], compileTrust(['loopback'])), '10.0.4.1');
  assert.throws(() => loadConfig({ REGISTRY_TRUST_PROXY: '10.0.0.0/8,proxy.example.org' }), (err: unknown) =>
    err instanceof ConfigError && /REGISTRY_TRUST_PROXY/.test(err.message) && /proxy\.example\.org/.test(err.message) && /CIDR/.test(err.message));
});

test('a loopback PUBLIC_URL while HOST listens beyond this machine is a start-up warning naming both (cards would send peers to themselves)', () => {
  const warningsOf = (env: Record<string, string>) => (loadConfig(env).warnings ?? []).filter((w) => w.startsWith('PUBLIC_URL is '));
  assert.deepEqual(warningsOf({ HOST: '0.0.0.0', PUBLIC_URL: 'http://127.0.0.1:8080' }), [
    'PUBLIC_URL is http://127.0.0.1:8080, a loopback address, while HOST=0.0.0.0 listens beyond this machine: the agent card, catalog and every URL the registry publishes point clients on other machines at their own; ' +
      "fine for a try-out on this machine (a container's published port included), otherwise set PUBLIC_URL to the URL clients reach the registry at (e.g. https://registry.example.com)",
  ]);
  for (const [HOST, PUBLIC_URL] of [['10.0.0.5', 'http://localhost:8080'], ['::', 'http://[::1]:8080/'], ['registry-1', 'https://api.localhost'], ['0.0.0.0', 'http://127.1.2.3']]) {
    assert.equal(warningsOf({ HOST, PUBLIC_URL }).length, 1, `${HOST} ${PUBLIC_URL}`);
  }
  // Loopback on both sides is a local try-out; a reachable PUBLIC_URL is what the warning asks for.
  for (const [HOST, PUBLIC_URL] of [['127.0.0.1', 'http://localhost:8080'], ['localhost', 'http://127.0.0.1:8080'], ['::1', 'http://[::1]:8080'], ['0.0.0.0', 'https://registry.example.com'], ['0.0.0.0', 'http://10.0.0.5:8080']]) {
    assert.deepEqual(warningsOf({ HOST, PUBLIC_URL }), [], `${HOST} ${PUBLIC_URL}`);
  }
  assert.deepEqual(warningsOf({ HOST: '127.0.0.1' }), [], 'no PUBLIC_URL: derived from HOST');
});

/** Sum of a metric's samples whose labels contain `labels`. */
async function metricValue(name: string, labels: string): Promise<number> {
  // The operator's scraper (admin token): /metrics counts against the address's request budget.
  const text = await (await fetch(`${registry.url}/metrics`, { headers: from('127.0.0.1', TOKENS.admin) })).text();
  return text
    .split('\n')
    .filter((line) => (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
