/**
 * Standing searches (issue 19) through the A2A SDK client against a real registry (SQLite):
 * the initial matches, added / updated / removed as entries are registered, changed and
 * unregistered, refusals (no token, bad request, not streamed, the cap), CancelTask, and
 * resuming with SubscribeToTask after a disconnect.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { Task, TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { dataPart, errorOf, message, op, resultOf, sdkClient, send, stateOf, streamEventJson, textPart, type WireJson } from './support/client.js';
import { assertV03Task, cliWatch, dataOf, EventLog, renewalHeldWhileCanceled, resume, sendWithPush, sendWithPush03, v03EventData, watch, webhook } from './support/watch-stream.js';
import { v1Card } from './support/documents.js';
import { eventually } from './support/eventually.js';
import { heapAfterGc } from './support/heap.js';
import { holdPoint } from './support/hold-point.js';
import { connect } from './support/raw-connection.js';
import { removeTempDir, spawnRegistry, startTestRegistry, TOKENS, TOKENS_ENV, type TestRegistry } from './support/registry.js';
import { startDnsServer, type DnsServer } from './support/dns-server.js';
import { slowUndiciLoad } from './support/slow-undici.js';


/** `text` as a regular expression's source that matches it literally. */
const literally = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A failed watch's `(last: ...)`, in either correct form: webhook `url` (a regular expression's
 * source) answered `answer` to the last attempt, or that attempt was cut by the retry window's end
 * (a loaded machine slowed the attempts before it) and the one before it was answered `answer`.
 * Either way `answer` is said: the receiver's answer to fix.
 */
function lastAttempt(url: string, answer: string): string {
  const cut = `no complete answer from ${url} within \\d+ ms, when the retry window \\(REGISTRY_WEBHOOK_RETRY_SECONDS\\) ended \\(the attempt before it: ${url} answered ${answer}\\)`;
  return `\\(last: (?:${url} answered ${answer}|${cut})\\)`;
}

function card(name: string, url: string, tags: string[]): WireJson {
  const c = v1Card(name, url) as WireJson;
  c.skills[0].tags = tags;
  return c;
}

describe('standing searches', () => {
  let registry: TestRegistry;
  let alice: Client;
  let bob: Client;
  const open: EventLog[] = [];

  before(async () => {
    // Webhook retries for 1.75 s: waits of 0.25, 0.5 and 1 s, so 4 attempts (the tests wait out
    // the window, so it is as short as shows doubling waits and a last attempt).
    registry = await startTestRegistry({ REGISTRY_MAX_WATCHES: '2', REGISTRY_WATCH_BUFFER: '3', REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_WEBHOOK_RETRY_SECONDS: '1.75' });
    alice = await sdkClient(registry.url, { token: TOKENS.alice });
    bob = await sdkClient(registry.url, { token: TOKENS.bob });
  });
  after(async () => {
    for (const log of open) log.disconnect();
    await registry.close();
    removeTempDir(registry.dataDir);
  });

  const track = (log: EventLog): EventLog => {
    open.push(log);
    return log;
  };
  const taskIdOf = async (log: EventLog): Promise<string> => (await log.waitFor((e) => e.task !== undefined, 'task')).task.id;
  const cancel = async (client: Client, log: EventLog): Promise<WireJson> => {
    const id = await taskIdOf(log);
    const task = await client.cancelTask({ tenant: '', id, metadata: undefined });
    await log.done;
    return { id, state: stateOf(streamEventJson({ payload: { $case: 'task', value: task } } as StreamResponse).task) };
  };

  /** Watch `id` expires now, as its timer would have it (its stored expiry passed). */
  const expireNow = async (id: string): Promise<void> => {
    const running = registry.core.watches.get(id)!;
    await registry.store.watches.update(id, { expiresAt: Date.now() - 1 });
    await registry.core.watches.expiring(running);
  };

  /** The one final status of stream `log`, once it has ended by itself (within 5 s), its last event. */
  const onlyFinalStatus = async (log: EventLog, what: string): Promise<WireJson> => {
    const ended = await Promise.race([log.done.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 5_000))]);
    const kinds = log.events.map((e) => (e.task ? `task:${e.task.status.state}` : e.statusUpdate ? `status:${e.statusUpdate.status.state}` : e.artifactUpdate.artifact.name)).join(', ');
    assert.ok(ended, `${what}: the stream ended; got ${kinds}`);
    const statuses = log.events.filter((e) => e.statusUpdate);
    assert.equal(statuses.length, 1, `${what}: one final status; got ${kinds}`);
    assert.equal(log.events.at(-1), statuses[0], `${what}: nothing after the final status; got ${kinds}`);
    return statuses[0]!.statusUpdate.status;
  };

  test('initial results, then added, updated and removed as entries enter, change and leave', async () => {
    const first = resultOf(await op(alice, { register: { agentCard: card('Pdf Translator One', 'https://one.example.org/a2a', ['pdf-translation']) } }));
    const log = track(watch(bob, { query: 'invoice', filter: { tags: ['pdf-translation'] } }));

    const initial = await log.waitFor((e) => e.artifactUpdate?.artifact?.name === 'watch-results', 'initial watch-results');
    const results = dataOf(initial.artifactUpdate.artifact);
    assert.deepEqual(results.results.map((h: WireJson) => h.id), [first.id]);
    assert.equal(results.total, 1);
    assert.equal(log.events[0]!.task.status.state, 'TASK_STATE_WORKING', 'the task stays WORKING');

    // An entry that does not match (wrong tag) is not an event.
    await op(alice, { register: { agentCard: card('Pdf Translator Off', 'https://off.example.org/a2a', ['other']) } });
    const second = resultOf(await op(alice, { register: { agentCard: card('Pdf Translator Two', 'https://two.example.org/a2a', ['pdf-translation']) } }));
    const added = await log.waitForEvent((e) => e.event === 'added', 'added');
    assert.equal(added.hit.id, second.id);
    assert.equal(added.hit.name, 'Pdf Translator Two');
    assert.equal(added.seq, 1);

    // A new revision that still matches: updated.
    const changed = card('Pdf Translator Two', 'https://two.example.org/a2a', ['pdf-translation']);
    changed.description = 'Translates PDF invoices, now faster.';
    await op(alice, { register: { agentCard: changed } });
    const updated = await log.waitForEvent((e) => e.event === 'updated', 'updated');
    assert.equal(updated.hit.id, second.id);

    // A revision that no longer matches: removed; then unregistering the other one: removed.
    await op(alice, { register: { agentCard: card('Pdf Translator Two', 'https://two.example.org/a2a', ['other']) } });
    const left = await log.waitForEvent((e) => e.event === 'removed' && e.hit.id === second.id, 'removed (no longer matches)');
    assert.equal(left.hit.name, 'Pdf Translator Two');
    await op(alice, { unregister: { id: first.id } });
    await log.waitForEvent((e) => e.event === 'removed' && e.hit.id === first.id, 'removed (unregistered)');
    assert.deepEqual(log.watchEvents.map((e) => e.event), ['added', 'updated', 'removed', 'removed']);
    assert.deepEqual(log.watchEvents.map((e) => e.seq), [1, 2, 3, 4]);
    assert.ok(!log.events.some((e) => e.statusUpdate), 'no status change while watching');

    const { state } = await cancel(bob, log);
    assert.equal(state, 'TASK_STATE_CANCELED');
    assert.equal(log.events.at(-1)!.statusUpdate?.status?.state, 'TASK_STATE_CANCELED', 'the stream ends CANCELED');
  });

  test('"initial": false skips the current matches', async () => {
    await op(alice, { register: { agentCard: card('Quiet Watcher Target', 'https://quiet.example.org/a2a', ['quiet']) } });
    const log = track(watch(bob, { filter: { tags: ['quiet'] }, initial: false }));
    await taskIdOf(log);
    const next = resultOf(await op(alice, { register: { agentCard: card('Quiet Watcher Second', 'https://quiet2.example.org/a2a', ['quiet']) } }));
    const added = await log.waitForEvent((e) => e.event === 'added', 'added');
    assert.equal(added.hit.id, next.id);
    assert.ok(!log.events.some((e) => e.artifactUpdate?.artifact?.name === 'watch-results'));
    await cancel(bob, log);
  });

  test('a watch needs a token, a valid request and a stream', async () => {
    const anonymous = await sdkClient(registry.url);
    const refused = track(watch(anonymous, { query: 'translator' }));
    const end = await refused.waitFor((e) => e.statusUpdate !== undefined, 'refusal');
    assert.equal(end.statusUpdate.status.state, 'TASK_STATE_REJECTED');
    assert.match(JSON.stringify(end.statusUpdate.status.message), /UNAUTHENTICATED.*token/);

    const bad = track(watch(bob, { query: 'x', filter: { colour: 'red' } }));
    const badEnd = await bad.waitFor((e) => e.statusUpdate !== undefined, 'bad request');
    assert.equal(badEnd.statusUpdate.status.state, 'TASK_STATE_REJECTED');
    assert.match(JSON.stringify(badEnd.statusUpdate.status.message), /BAD_REQUEST.*colour/);

    const plain = errorOf(await send(bob, [dataPart({ watch: { query: 'translator' } })]));
    assert.equal(plain.code, 'BAD_REQUEST');
    assert.match(plain.message, /SendStreamingMessage/);

    // Its query has a search's limit, and the refusal names the watch (it said "search").
    const long = errorOf(await send(bob, [dataPart({ watch: { query: 'x'.repeat(1001) } })]));
    assert.equal(long.code, 'BAD_REQUEST');
    assert.match(long.message, /^The "watch" arguments are not valid: \/parts\/0\/data\/watch\/query: the query is 1001 characters; the limit is 1000/);
  });

  test('each principal may keep REGISTRY_MAX_WATCHES watches open', async () => {
    const one = track(watch(alice, { query: 'one' }));
    const two = track(watch(alice, { query: 'two' }));
    await taskIdOf(one);
    await taskIdOf(two);
    const third = track(watch(alice, { query: 'three' }));
    const end = await third.waitFor((e) => e.statusUpdate !== undefined, 'refusal');
    assert.equal(end.statusUpdate.status.state, 'TASK_STATE_REJECTED');
    assert.match(JSON.stringify(end.statusUpdate.status.message), /QUOTA_EXCEEDED.*REGISTRY_MAX_WATCHES/);
    // Another principal has its own allowance; a canceled watch frees a place.
    const bobs = track(watch(bob, { query: 'bob' }));
    await taskIdOf(bobs);
    await cancel(alice, one);
    const again = track(watch(alice, { query: 'again' }));
    await again.waitFor((e) => e.artifactUpdate?.artifact?.name === 'watch-results', 'initial results');
    await cancel(alice, two);
    await cancel(alice, again);
    await cancel(bob, bobs);
  });

  test('a follower that fails as a watch starts (throwing or rejecting): the start ends FAILED, the watch is neither kept nor counted, and other watches run on', async () => {
    const hub = registry.core.watches;
    const running = track(watch(bob, { query: 'follower-fails-running', initial: false }));
    const runningId = await taskIdOf(running);
    for (const how of ['throws', 'rejects'] as const) {
      const query = `follower-fails-${how}`;
      let failedId: string | undefined;
      // One more follower of new watches, as push notifications and the task writer are, failing for this one.
      const stop = hub.onStart((started) => {
        if (started.request.query !== query) return;
        failedId = started.id;
        if (how === 'throws') throw new Error(`a follower ${how}`);
        return Promise.reject(new Error(`a follower ${how}`));
      });
      try {
        // Before, the watch stayed in the hub, never ended: this stream followed it, WORKING, while its task said FAILED.
        const status = await onlyFinalStatus(track(watch(bob, { query })), how);
        assert.equal(status.state, 'TASK_STATE_FAILED', how);
        assert.match(status.message.parts[0].text, /^INTERNAL: The registry could not complete the request; try again later\./, how);
      } finally {
        stop();
      }
      assert.ok(failedId, `the follower was told of the ${how} watch`);
      assert.equal(hub.get(failedId), undefined, `the ${how} watch is not kept`);
      assert.equal(await registry.store.watches.get(failedId), undefined, `the ${how} watch's definition is removed: it does not run again after a restart`);
    }
    // Not counted: bob (REGISTRY_MAX_WATCHES=2) starts a second watch beside the one running.
    const second = track(watch(bob, { query: 'follower-fails-second', initial: false }));
    const secondId = await taskIdOf(second);
    assert.ok(hub.get(secondId)?.isOpen, `bob's second watch runs; got ${JSON.stringify(second.events.at(-1))}`);
    assert.equal(hub.countFor('bob'), 2);
    assert.ok(hub.get(runningId)?.isOpen, 'the watch already running runs on');
    await cancel(bob, running);
    await cancel(bob, second);
  });

  test('a watch that grows past the entries a watch may follow ends FAILED saying so, as one that broad is refused at the start', async () => {
    // The limit (10,000) lowered for this registry's watches, so a few entries reach it.
    const limits = (registry.core.watches as unknown as { limits: { maxTracked: number } }).limits;
    const kept = limits.maxTracked;
    limits.maxTracked = 2;
    try {
      const tag = `broad-${randomUUID().slice(0, 8)}`;
      const entry = (i: number) => card(`Broad Agent ${i} ${tag}`, `https://${tag}-${i}.example.org/a2a`, [tag]);
      for (const i of [1, 2]) resultOf(await op(alice, { register: { agentCard: entry(i) } }));
      // A change that takes it past the limit ends it (before, it went on, its matches unbounded).
      const growing = track(watch(bob, { filter: { tags: [tag] } }));
      await growing.waitFor((e) => e.artifactUpdate?.artifact?.name === 'watch-results', 'the initial matches');
      resultOf(await op(alice, { register: { agentCard: entry(3) } }));
      const ended = await growing.waitFor((e) => e.statusUpdate !== undefined, 'the end of the watch');
      assert.equal(ended.statusUpdate.status.state, 'TASK_STATE_FAILED');
      assert.match(ended.statusUpdate.status.message.parts[0].text, /^The watch ended: it matches more than 2 entries; a watch follows at most 2\. Start a narrower one/);
      assert.deepEqual(growing.watchEvents, [], 'no event for the entry past the limit');
      const refused = track(watch(bob, { filter: { tags: [tag] } }));
      const refusal = await refused.waitFor((e) => e.statusUpdate !== undefined, 'the refusal');
      assert.match(JSON.stringify(refusal.statusUpdate.status.message), /BAD_REQUEST.*The watch matches 3 entries; a watch follows at most 2\. Narrow its query or filter/);

      // A resync that finds it too broad (the index reloaded) ends it too: before, it went on knowing no matches.
      limits.maxTracked = 3;
      const resynced = track(watch(bob, { filter: { tags: [tag] } }));
      await resynced.waitFor((e) => e.artifactUpdate?.artifact?.name === 'watch-results', 'the initial matches');
      limits.maxTracked = 2;
      await registry.core.service.reloadIndex('test: the index reloaded');
      const end = await resynced.waitFor((e) => e.statusUpdate !== undefined, 'the end of the resynced watch');
      assert.equal(end.statusUpdate.status.state, 'TASK_STATE_FAILED');
      assert.match(end.statusUpdate.status.message.parts[0].text, /it matches 3 entries; a watch follows at most 2/);
    } finally {
      limits.maxTracked = kept;
    }
  });

  test('a client that disconnects resumes with SubscribeToTask, saying its last event (Last-Event-ID), and gets the events it missed', async () => {
    const log = track(watch(bob, { filter: { tags: ['resume-me'] } }));
    const id = await taskIdOf(log);
    const a = resultOf(await op(alice, { register: { agentCard: card('Resume A', 'https://resume-a.example.org/a2a', ['resume-me']) } }));
    await log.waitForEvent((e) => e.event === 'added' && e.hit.id === a.id, 'added A');
    log.disconnect();
    await log.done;

    const b = resultOf(await op(alice, { register: { agentCard: card('Resume B', 'https://resume-b.example.org/a2a', ['resume-me']) } }));
    const resumed = track(resume(bob, id, 1));
    assert.equal((await resumed.waitFor((e) => e.task !== undefined, 'task')).task.status.state, 'TASK_STATE_WORKING');
    const missed = await resumed.waitForEvent((e) => e.event === 'added' && e.hit.id === b.id, 'the missed event');
    assert.equal(missed.seq, 2);
    // Then live events, none repeated.
    const c = resultOf(await op(alice, { register: { agentCard: card('Resume C', 'https://resume-c.example.org/a2a', ['resume-me']) } }));
    await resumed.waitForEvent((e) => e.hit?.id === c.id, 'live event');
    assert.deepEqual(resumed.watchEvents.map((e) => e.seq), [2, 3]);
    resumed.disconnect();
    await resumed.done;

    // A gap longer than the buffer (REGISTRY_WATCH_BUFFER=3): one resync with the current matches.
    for (const name of ['Resume D', 'Resume E', 'Resume F', 'Resume G']) {
      await op(alice, { register: { agentCard: card(name, `https://${name.replace(' ', '-').toLowerCase()}.example.org/a2a`, ['resume-me']) } });
    }
    await op(alice, { unregister: { id: a.id } });
    const late = track(resume(bob, id, 3));
    const resync = await late.waitForEvent((e) => e.event === 'resync', 'resync');
    assert.equal(resync.total, 6);
    assert.ok(!resync.results.some((h: WireJson) => h.id === a.id));
    assert.equal(resync.seq, 8, 'numbered as the last event: the matches as of it');
    assert.equal(late.watchEvents.length, 1);
    const { state } = await cancel(bob, late);
    assert.equal(state, 'TASK_STATE_CANCELED');
  });

  test('two subscribers of one watch: the one that was away gets what it missed, whatever the other was sent', async () => {
    const tag = `two-subscribers-${randomUUID().slice(0, 8)}`;
    const entry = (i: number) => ({ register: { agentCard: card(`Two Subscribers ${i} ${tag}`, `https://${tag}-${i}.example.org/a2a`, [tag]) } });
    const first = track(watch(bob, { filter: { tags: [tag] }, initial: false }));
    const id = await taskIdOf(first);
    const second = track(resume(bob, id));
    await second.waitFor((e) => e.task !== undefined, 'the second subscriber\'s task');
    await op(alice, entry(1));
    await first.waitForEvent((e) => e.seq === 1, 'event 1, first subscriber');
    await second.waitForEvent((e) => e.seq === 1, 'event 1, second subscriber');
    second.disconnect();
    await second.done;
    await op(alice, entry(2));
    await op(alice, entry(3));
    await first.waitForEvent((e) => e.seq === 3, 'events 2 and 3, first subscriber');

    // Before, the watch kept one "last event sent" for both: the second was told it had missed nothing.
    const said = track(resume(bob, id, 1));
    await said.waitForEvent((e) => e.seq === 3, 'events 2 and 3, resumed after event 1');
    assert.deepEqual(said.watchEvents.map((e) => e.seq), [2, 3]);
    // Not saying: every event the watch keeps (its buffer still reaches back to event 1); the
    // client skips those it has by their seq.
    const silent = track(resume(bob, id));
    await silent.waitForEvent((e) => e.seq === 3, 'every event kept');
    assert.deepEqual(silent.watchEvents.map((e) => e.seq), [1, 2, 3]);
    // Having the last event: nothing but live events.
    const current = track(resume(bob, id, 3));
    await current.waitFor((e) => e.task !== undefined, 'the task');
    await op(alice, entry(4));
    await current.waitForEvent((e) => e.seq === 4, 'live event 4');
    assert.deepEqual(current.watchEvents.map((e) => e.seq), [4]);
    await first.waitForEvent((e) => e.seq === 4, 'live event 4, first subscriber');
    assert.deepEqual(first.watchEvents.map((e) => e.seq), [1, 2, 3, 4], 'the first subscriber gets no resync or repeat for the others');
    // Past the buffer (REGISTRY_WATCH_BUFFER=3: events 2 to 4 kept), one resync for that client alone.
    const behind = track(resume(bob, id));
    const resync = await behind.waitForEvent((e) => e.event === 'resync', 'a resync (event 1 is no longer kept)');
    assert.equal(resync.seq, 4);
    assert.deepEqual(resync.results.map((h: WireJson) => h.name).sort(), [1, 2, 3, 4].map((i) => `Two Subscribers ${i} ${tag}`));
    assert.equal(behind.watchEvents.length, 1);
    assert.equal(first.watchEvents.length, 4, 'nor is the resync sent to anyone else');
    await cancel(bob, first);
  });

  test('a stream cut after events were written to it: the client resumes with them, as SSE frames numbered by their seq', async () => {
    const tag = `cut-stream-${randomUUID().slice(0, 8)}`;
    const conversation = await connect(registry.url);
    let id = '';
    try {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendStreamingMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [dataPart({ watch: { filter: { tags: [tag] }, initial: false } })] } },
      });
      conversation.socket.write(
        `POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${TOKENS.bob}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await eventually(async () => /"task":\{"id":"[0-9a-f-]{36}"/.test(conversation.received()), 'the watch\'s task on the raw stream');
      id = /"task":\{"id":"([0-9a-f-]{36})"/.exec(conversation.received())![1]!;
      for (const i of [1, 2]) await op(alice, { register: { agentCard: card(`Cut Stream ${i} ${tag}`, `https://${tag}-${i}.example.org/a2a`, [tag]) } });
      // The server wrote both events into the connection, each frame with its seq as the SSE id
      // (the task's frame has none) ...
      await eventually(async () => conversation.received().includes('"seq":2'), 'both events written to the stream');
      const frames = conversation.received().split('\r\n\r\n').slice(1).join('').split('\n\n').filter((f) => f.includes('data:'));
      const ids = frames.map((f) => /^id: (\d+)$/m.exec(f)?.[1]);
      assert.deepEqual(ids, [undefined, '1', '2'], frames.join('\n\n'));
      assert.match(frames[1]!, /^id: 1\ndata: \{/m, 'the id line leads its frame');
    } finally {
      // ... and the client never read them: its connection died (here: it is dropped unread).
      conversation.socket.destroy();
    }
    // Before, they counted as sent: the resumed stream got the task and nothing else.
    const resumed = track(resume(bob, id));
    await resumed.waitForEvent((e) => e.seq === 2, 'both events again');
    assert.deepEqual(resumed.watchEvents.map((e) => [e.event, e.seq, e.hit.name]), [1, 2].map((i) => ['added', i, `Cut Stream ${i} ${tag}`]));
    await cancel(bob, resumed);
  });

  test('a Last-Event-ID that is no event of the watch is refused, saying what to send', async () => {
    const log = track(watch(bob, { query: `last-event-id-${randomUUID().slice(0, 8)}`, initial: false }));
    const id = await taskIdOf(log);
    const subscribe = async (lastEventId: string): Promise<WireJson> => {
      const res = await fetch(`${registry.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.bob}`, 'Last-Event-ID': lastEventId },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id } }),
      });
      return (await res.json()) as WireJson;
    };
    const word = await subscribe('latest');
    assert.equal(word.error?.code, -32602, JSON.stringify(word));
    assert.match(word.error.message, /^Last-Event-ID must be the seq of the last watch event you received .*got "latest"\. Leave it out/);
    const ahead = await subscribe('7');
    assert.equal(ahead.error?.code, -32602, JSON.stringify(ahead));
    assert.match(ahead.error.message, new RegExp(`^Last-Event-ID 7 is past the last event of watch ${id} \\(seq 0\\): it is no event this watch sent`));
    await cancel(bob, log);
  });

  test('a SubscribeToTask stream that closed is let go while its watch runs on: its request, body and scope', async (t) => {
    const log = track(watch(bob, { query: `resubscribed-${randomUUID().slice(0, 8)}`, initial: false }));
    const id = await taskIdOf(log);
    // One stream, its request carrying `padBytes` in a parameter nothing reads, closed by the client once the task came.
    const subscribe = async (padBytes: number) => {
      const stop = new AbortController();
      const res = await fetch(`${registry.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.bob}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id, pad: 'x'.repeat(padBytes) } }),
        signal: stop.signal,
      });
      assert.ok((await res.body!.getReader().read()).value, 'the stream began');
      stop.abort();
    };
    const streams = registry.core.abuse.openStreams;
    const growth = async (padBytes: number) => {
      const before = heapAfterGc();
      for (let i = 0; i < 60; i++) await subscribe(padBytes);
      await eventually(async () => registry.core.abuse.openStreams === streams, 'the closed streams ended');
      return heapAfterGc() - before;
    };
    await growth(0);
    const held = (await growth(48 * 1024)) - (await growth(0));
    t.diagnostic(`60 closed streams of 48 KB requests hold ${(held / 1e6).toFixed(2)} MB more than 60 small ones`);
    // Each stream's reaction to the watch's end stayed, with its request's scope, until the watch
    // ended: 2.9 MB more here, and about 13 KB a stream of its own.
    assert.ok(held < 1e6, `60 closed streams of 48 KB requests hold ${(held / 1e6).toFixed(2)} MB more than 60 small ones`);
    await cancel(bob, log);
  });

  test('HEAD of a watch\'s SubscribeToTask (GET /tasks/{id}:subscribe) ends with its headers: the connection goes on, no stream stays open, the watch runs on', async () => {
    const log = track(watch(bob, { query: `head-${randomUUID().slice(0, 8)}`, initial: false }));
    const id = await taskIdOf(log);
    const streams = registry.core.abuse.openStreams;
    const conversation = await connect(registry.url);
    try {
      // A HEAD, then a GET on the same connection: the GET was never answered, the HEAD held open as the stream.
      conversation.socket.write(`HEAD /a2a/rest/tasks/${id}:subscribe HTTP/1.1\r\nHost: 127.0.0.1\r\nA2A-Version: 1.0\r\nAuthorization: Bearer ${TOKENS.bob}\r\n\r\n`);
      conversation.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await eventually(async () => conversation.received().includes('{"status":"ok"}'), 'the request after the HEAD answered', 2_000);
      const [head] = conversation.received().split('\r\n\r\n');
      assert.match(head!, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(head!, /\r\nContent-Type: text\/event-stream\r\n/);
      await eventually(async () => registry.core.abuse.openStreams === streams, 'the HEAD counted no stream open');
    } finally {
      conversation.socket.destroy();
    }
    assert.equal((await cancel(bob, log)).state, 'TASK_STATE_CANCELED', 'the watch ran on');
  });

  test("a watch keeps its stored task current after the stream that started it is cut: GetTask, and SubscribeToTask's first task, show its last event", async () => {
    const tag = `stored-task-${randomUUID().slice(0, 8)}`;
    const log = track(watch(bob, { filter: { tags: [tag] } }));
    const id = await taskIdOf(log);
    await log.waitFor((e) => e.artifactUpdate?.artifact?.name === 'watch-results', 'the initial matches');
    log.disconnect();
    await log.done;
    const stored = async (): Promise<WireJson> => Task.toJSON(await bob.getTask({ tenant: '', id, historyLength: undefined })) as WireJson;
    const storedEvent = async (): Promise<WireJson | undefined> => {
      const artifact = (await stored()).artifacts?.find((a: WireJson) => a.name === 'watch-event');
      return artifact && dataOf(artifact);
    };
    // Before, the task stayed at the last event the cut stream had been sent (here: none).
    for (const i of [1, 2, 3]) {
      const entry = resultOf(await op(alice, { register: { agentCard: card(`Stored Task ${i} ${tag}`, `https://${tag}-${i}.example.org/a2a`, [tag]) } }));
      await eventually(async () => (await storedEvent())?.hit?.id === entry.id, `event ${i} in the stored task`);
      assert.equal((await storedEvent())!.seq, i);
    }
    assert.deepEqual((await stored()).artifacts.map((a: WireJson) => a.name), ['watch-results', 'watch-event'], 'each event replaces the previous one');
    // A2A 3.1.6: SubscribeToTask sends the task as it is now first.
    const resumed = track(new EventLog((signal) => bob.resubscribeTask({ tenant: '', id }, { signal })));
    const first = (await resumed.waitFor((e) => e.task !== undefined, 'task')).task;
    assert.equal(dataOf(first.artifacts.find((a: WireJson) => a.name === 'watch-event')).seq, 3);
    assert.equal((await cancel(bob, resumed)).state, 'TASK_STATE_CANCELED');
  });

  test('a canceled watch tells one CANCELED status everywhere: the same message id and time in CancelTask, its streams, its webhook and GetTask', async () => {
    const hook = await webhook(() => 200);
    try {
      const log = track(watch(bob, { query: `one-status-${randomUUID().slice(0, 8)}` }));
      const id = await taskIdOf(log);
      await bob.createTaskPushNotificationConfig({ tenant: '', taskId: id, id: 'hook', url: hook.url, token: 't', authentication: undefined });
      const resumed = track(new EventLog((signal) => bob.resubscribeTask({ tenant: '', id }, { signal })));
      await resumed.waitFor((e) => e.task !== undefined, 'the resumed stream');
      // The task's reads from storage while it is canceled (a running watch's task is read from
      // the database, its cached copy possibly outdated).
      const records = registry.store.tasks;
      const load = records.load;
      let reads = 0;
      records.load = async (scope, taskId) => {
        if (taskId === id) reads++;
        return load.call(records, scope, taskId);
      };
      const canceled = await bob.cancelTask({ tenant: '', id, metadata: undefined }).then((task) => Task.toJSON(task) as WireJson).finally(() => (records.load = load));
      assert.equal(canceled.status.state, 'TASK_STATE_CANCELED');
      // One to check it (not ended) and find its watch, one to store its end; the SDK's reads
      // find it finished, in memory. Before, the check and the watch's lookup read it twice.
      assert.equal(reads, 2, 'the task read from storage twice while it was canceled');
      const told = [
        ['CancelTask', canceled.status],
        ['the stream that started it', (await log.waitFor((e) => e.statusUpdate !== undefined, 'its end')).statusUpdate.status],
        ['SubscribeToTask', (await resumed.waitFor((e) => e.statusUpdate !== undefined, 'its end')).statusUpdate.status],
        ['the webhook', (await hook.waitFor((b) => b.statusUpdate !== undefined, 'its end')).statusUpdate.status],
        ['GetTask', (Task.toJSON(await bob.getTask({ tenant: '', id, historyLength: undefined })) as WireJson).status],
      ] as const;
      // Before, three message ids (the SDK's, the resumed stream's, the webhook's) and the webhook's time a moment later.
      for (const [where, status] of told) {
        assert.deepEqual(
          { state: status.state, messageId: status.message?.messageId, timestamp: status.timestamp },
          { state: 'TASK_STATE_CANCELED', messageId: canceled.status.message.messageId, timestamp: canceled.status.timestamp },
          where,
        );
      }
      assert.match(canceled.status.message.parts[0].text, /The watch was canceled/);
    } finally {
      await hook.close();
    }
  });

  test("CancelTask as a watch is paused after an internal failure (its lease not yet released): its webhook is told CANCELED, as a paused watch's is", async () => {
    const hub = registry.core.watches;
    const records = registry.store.watches;
    const releaseUntil = records.releaseUntil;
    const held = holdPoint();
    const hook = await webhook(() => 200);
    let stop = (): void => undefined;
    try {
      const task = await sendWithPush(bob, { query: `paused-canceled-${randomUUID().slice(0, 8)}`, initial: false }, { url: hook.url, token: 't' });
      // Its pause held where its lease is released until its back-off.
      records.releaseUntil = async (holder, id, until) => {
        if (id === task.id) await held.hold();
        return releaseUntil.call(records, holder, id, until);
      };
      // A follower added now fails on this watch: the hub stops it and pauses it, to run it again later.
      const remove = hub.onStart((started) => {
        if (started.id === task.id) throw new Error('a follower fails on this watch');
      });
      stop = () => void remove();
      await held.reached;
      assert.equal(hub.get(task.id), undefined, 'stopped here');
      const canceling = bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      // The cancel meets the pause half done (before, it was answered then, the row removed as
      // another replica's watch's, and nothing told the webhook), then the pause completes.
      await Promise.race([canceling.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 200))]);
      held.release();
      assert.equal((await canceling).status?.state, TaskState.TASK_STATE_CANCELED);
      const end = await hook.waitFor((b) => b.statusUpdate !== undefined, 'the final status pushed');
      assert.equal(end.statusUpdate.taskId, task.id);
      assert.equal(end.statusUpdate.status.state, 'TASK_STATE_CANCELED');
      assert.equal(await records.get(task.id), undefined, 'its definition is removed: it does not run again');
    } finally {
      held.release();
      records.releaseUntil = releaseUntil;
      stop();
      await hook.close();
    }
  });

  test('another principal can neither subscribe to nor cancel a watch', async () => {
    const log = track(watch(bob, { query: 'private' }));
    const id = await taskIdOf(log);
    await assert.rejects(alice.cancelTask({ tenant: '', id, metadata: undefined }), /not found/i);
    await assert.rejects(async () => {
      for await (const _ of alice.resubscribeTask({ tenant: '', id })) break;
    }, /not found/i);
    await cancel(bob, log);
  });

  test("a message on an open watch's task other than a renewal is refused, and the watch stays open and cancelable", async () => {
    const log = track(watch(bob, { query: 'continued' }));
    const id = await taskIdOf(log);
    const onWatch = { ...message([textPart('continued')]), taskId: id };
    await assert.rejects(
      bob.sendMessage({ tenant: '', message: onWatch, configuration: undefined, metadata: undefined }),
      /is an open watch: the only message it takes is \{"renew": \{\}\}.*CancelTask/,
    );
    await assert.rejects(async () => {
      for await (const _ of bob.sendMessageStream({ tenant: '', message: { ...onWatch, messageId: randomUUID() }, configuration: undefined, metadata: undefined })) break;
    }, /is an open watch/);
    // Another principal's watch stays unknown to alice, as for every other method.
    await assert.rejects(alice.sendMessage({ tenant: '', message: { ...onWatch, messageId: randomUUID() }, configuration: undefined, metadata: undefined }), /not found/i);
    // The watch still runs: its next event arrives, and CancelTask ends it.
    const entry = resultOf(await op(alice, { register: { agentCard: card('Continued Match', 'https://continued.example.org/a2a', ['continued']) } }));
    await log.waitForEvent((e) => e.event === 'added' && e.hit.id === entry.id, 'added after the refused messages');
    const task = await bob.getTask({ tenant: '', id, historyLength: undefined });
    assert.equal(task.status?.state, TaskState.TASK_STATE_WORKING);
    assert.equal((await cancel(bob, log)).state, 'TASK_STATE_CANCELED');
    // The watch's request is recorded as it ended (it was COMPLETED whatever the end), as a watch (it was `none`).
    await eventually(
      async () => /registry_requests_total\{method="SendStreamingMessage",operation="watch",outcome="CANCELED"/.test(await (await fetch(`${registry.url}/metrics`)).text()),
      'the watch recorded as CANCELED',
    );
  });

  test('a renewal on a finished watch is UnsupportedOperationError, as any message on a finished task; on another contextId, invalid params', async () => {
    const log = track(watch(bob, { query: 'renewed-late' }));
    const id = await taskIdOf(log);
    const renewal = (extra: WireJson = {}) => ({ message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: id, parts: [dataPart({ renew: {} })], ...extra } });
    const rpc = async (params: unknown): Promise<WireJson> => {
      const res = await fetch(`${registry.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.bob}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params }),
      });
      return (await res.json()) as WireJson;
    };
    // A2A 3.4.1 / the SDK's rule for every other message on a task: the contextId, when given, is the task's.
    const mismatch = await rpc(renewal({ contextId: 'another-context' }));
    assert.equal(mismatch.error?.code, -32602, JSON.stringify(mismatch));
    assert.match(mismatch.error.message, /contextId mismatch/);
    assert.equal((await rpc(renewal())).result?.task?.status?.state, 'TASK_STATE_WORKING', 'renewed without a contextId');

    assert.equal((await cancel(bob, log)).state, 'TASK_STATE_CANCELED');
    // A2A 3.1.1: a message to a task in a terminal state is UnsupportedOperationError (-32004,
    // HTTP 400 FAILED_PRECONDITION); it was invalid params, as if the request were malformed.
    const late = await rpc(renewal());
    assert.equal(late.error?.code, -32004, JSON.stringify(late));
    assert.match(late.error.message, /terminal state \(TASK_STATE_CANCELED\).*not an open watch/);
    const res = await fetch(`${registry.url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.bob}` },
      body: JSON.stringify(renewal()),
    });
    const body = (await res.json()) as WireJson;
    assert.equal(res.status, 400);
    assert.equal(body.error.status, 'FAILED_PRECONDITION');
    assert.equal(body.error.details[0].reason, 'UNSUPPORTED_OPERATION');
    // A finished task that never was a watch (a registration) is not told it is "no open watch any more".
    const registration = await rpc({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [dataPart({ register: { agentCard: card('Renewed Registration', 'https://renewed-registration.example.org/a2a', ['x']) } })] } });
    const notWatch = await rpc({ message: { ...renewal().message, taskId: registration.result.task.id } });
    assert.equal(notWatch.error?.code, -32004, JSON.stringify(notWatch));
    assert.match(notWatch.error.message, /terminal state \(TASK_STATE_COMPLETED\): it is not a watch's task and cannot be renewed/);
  });

  test('a watch that ends before its task is stored (its webhook refused the initial matches meanwhile) still ends FAILED in its task, not WORKING for good', async () => {
    // A redirect is a failed delivery, not retried: the watch ends at its first notification.
    const hook = await webhook(() => 308, undefined, 0, { location: 'https://hooks.example.invalid/elsewhere' });
    const records = registry.store.tasks;
    const save = records.save;
    let held = false;
    // The SDK's first save of the watch's task waits until the watch has ended, as a loaded machine had it.
    records.save = async (...args) => {
      const [row] = args;
      if (!held && row.status_state === 'TASK_STATE_WORKING' && row.history?.includes('ended-before-stored')) {
        held = true;
        await eventually(async () => hook.requests.length > 0 && registry.core.watches.get(row.id) === undefined, 'the watch ended by its webhook', 5_000);
      }
      return save.apply(records, args);
    };
    try {
      const task = await sendWithPush(bob, { query: 'ended-before-stored' }, { url: hook.url, token: 'ended-before-stored' });
      assert.ok(held, 'the task\'s save was held until the watch had ended');
      let state: string | undefined;
      await eventually(async () => {
        state = (Task.toJSON(await bob.getTask({ tenant: '', id: task.id as string, historyLength: undefined })) as WireJson).status?.state;
        return state === 'TASK_STATE_FAILED';
      }, 'the watch\'s task FAILED', 3_000).catch((error: unknown) => assert.fail(`${(error as Error).message}; it is ${state}`));
    } finally {
      records.save = save;
      await hook.close();
    }
  });

  test('a streamed watch that ends before its task is stored tells the one final status GetTask shows, then its stream ends (JSON-RPC and HTTP+JSON)', async () => {
    const records = registry.store.tasks;
    const save = records.save;
    try {
      for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
        const query = `streamed-ended-before-stored-${binding}`;
        const point = holdPoint();
        let held: string | undefined;
        // The SDK's first save of the watch's task (before the stream's first event) is held while the watch expires.
        records.save = async (...args) => {
          const [row] = args;
          if (held === undefined && row.status_state === 'TASK_STATE_WORKING' && row.history?.includes(query)) {
            held = row.id;
            await point.hold();
          }
          return save.apply(records, args);
        };
        const log = track(watch(await sdkClient(registry.url, { token: TOKENS.bob, binding }), { query }));
        try {
          await point.reached;
          await expireNow(held!);
          assert.equal(registry.core.watches.get(held!), undefined, 'the watch expired while its task was being stored');
        } finally {
          point.release();
          records.save = save;
        }
        // Before, the stream ended after the WORKING task, telling no end.
        const status = await onlyFinalStatus(log, binding);
        assert.equal(log.events[0]?.task?.id, held, `the stream starts with the watch's task (${binding})`);
        assert.equal(status.state, 'TASK_STATE_COMPLETED', binding);
        assert.match(status.message.parts[0].text, /expired/);
        const stored = (Task.toJSON(await bob.getTask({ tenant: '', id: held!, historyLength: undefined })) as WireJson).status;
        assert.deepEqual(stored, status, `GetTask shows the status the stream told (${binding})`);
        // A CancelTask now finds the watch ended: its one status stands (before e6acd72 the task
        // stayed WORKING, and the SDK marked it CANCELED over the end the stream had told).
        await assert.rejects(bob.cancelTask({ tenant: '', id: held!, metadata: undefined }), /not cancelable/);
        assert.deepEqual((Task.toJSON(await bob.getTask({ tenant: '', id: held!, historyLength: undefined })) as WireJson).status, status, `the status stands after CancelTask (${binding})`);
      }
    } finally {
      records.save = save;
    }
  });

  test('a watch that expires while it is still being started (its definition being stored) ends COMPLETED in its task and its stream, not WORKING for good (streamed and push-only)', async () => {
    const records = registry.store.watches;
    const create = records.create;
    const hook = await webhook(() => 200);
    try {
      for (const how of ['streamed', 'push-only'] as const) {
        const query = `expired-while-starting-${how}`;
        const point = holdPoint();
        let id: string | undefined;
        // The definition's write is held while the watch's time runs out, as a loaded machine had
        // it with a one-second time to live: the watch ends before the hub has started it.
        records.create = async (...args) => {
          const [row] = args;
          if (id === undefined && row.request.includes(query)) {
            id = row.id;
            await point.hold();
          }
          return create.apply(records, args);
        };
        const log = how === 'streamed' ? track(watch(bob, { query })) : undefined;
        const sent = how === 'push-only' ? sendWithPush(bob, { query }, { url: hook.url, token: query }) : undefined;
        try {
          await point.reached;
          await registry.core.watches.expiring(registry.core.watches.get(id!)!);
        } finally {
          point.release();
          records.create = create;
        }
        let told: WireJson;
        if (log) {
          // Before, the stream ended after the WORKING task, telling no end.
          told = await onlyFinalStatus(log, how);
          assert.equal(log.events[0]?.task?.id, id, 'the stream starts with the watch\'s task');
        } else {
          assert.equal((await sent!).id, id);
          told = (await hook.waitFor((body) => body.statusUpdate?.taskId === id, 'the final status pushed')).statusUpdate.status;
        }
        assert.equal(told.state, 'TASK_STATE_COMPLETED', how);
        assert.match(told.message.parts[0].text, /expired/);
        // Before, GetTask said WORKING for good.
        let stored: WireJson | undefined;
        await eventually(async () => {
          stored = (Task.toJSON(await bob.getTask({ tenant: '', id: id!, historyLength: undefined })) as WireJson).status;
          return stored?.state !== 'TASK_STATE_WORKING';
        }, `the task of the ${how} watch ended`, 3_000).catch((error: unknown) => assert.fail(`${(error as Error).message}; it is ${JSON.stringify(stored)}`));
        assert.deepEqual(stored, told, `GetTask shows the one status told (${how})`);
        if (!log) assert.equal(hook.requests.filter((r) => r.body.statusUpdate?.taskId === id).length, 1, 'one final status pushed');
        // Removed after it was written, not before: nothing is left to run again after a restart.
        await eventually(async () => (await records.get(id!)) === undefined, `the ${how} watch's definition removed`, 3_000);
      }
    } finally {
      records.create = create;
      await hook.close();
    }
  });

  test("SubscribeToTask racing the watch's expiry (its end not yet stored): the stream tells the one COMPLETED status the started stream and GetTask have, then ends", async () => {
    const log = track(watch(bob, { query: `subscribe-racing-expiry-${randomUUID().slice(0, 8)}`, initial: false }));
    const id = await taskIdOf(log);
    const records = registry.store.tasks;
    const load = records.load;
    // The expiry's final status is held on its way into the task (its write's first read) until
    // the SubscribeToTask has read the task, still WORKING.
    const expiry = holdPoint();
    let readBySubscribe!: () => void;
    const subscribed = new Promise<void>((resolve) => (readBySubscribe = resolve));
    let expiring = false;
    let reads = 0;
    records.load = async (scope, taskId) => {
      if (taskId !== id || !expiring) return load.call(records, scope, taskId);
      reads++;
      if (reads === 1) await expiry.hold();
      const row = await load.call(records, scope, taskId);
      if (reads === 2) readBySubscribe();
      return row;
    };
    try {
      expiring = true;
      await expireNow(id);
      await expiry.reached;
      const resumed = track(resume(bob, id));
      await subscribed;
      assert.equal(reads, 2, 'the SubscribeToTask read the task while its end was held');
      expiry.release();
      // Before, the stream ended after the WORKING task, telling no end.
      const status = await onlyFinalStatus(resumed, 'SubscribeToTask');
      const told = (await log.waitFor((e) => e.statusUpdate !== undefined, 'the end on the stream that started it')).statusUpdate.status;
      assert.equal(told.state, 'TASK_STATE_COMPLETED');
      const stored = (Task.toJSON(await bob.getTask({ tenant: '', id, historyLength: undefined })) as WireJson).status;
      assert.deepEqual(status, told, 'the status the stream that started the watch was told');
      assert.deepEqual(stored, told, 'the status GetTask shows');
    } finally {
      expiry.release();
      records.load = load;
    }
  });

  test('a renewal racing CancelTask: the watch ends with its one CANCELED status, and the renewal that lost is refused, not answered as renewed', async () => {
    const log = track(watch(bob, { query: 'renewed-racing' }));
    const id = await taskIdOf(log);
    // The renewal is held where it stores the new expiry; the cancel runs to its end meanwhile.
    const records = registry.store.watches;
    const update = records.update;
    const point = holdPoint();
    records.update = async (...args) => {
      if (args[0] === id && args[1].expiresAt !== undefined) await point.hold();
      return update.apply(records, args);
    };
    try {
      const { renewal, canceled } = await renewalHeldWhileCanceled(point, registry.url, TOKENS.bob, id, () => bob.cancelTask({ tenant: '', id, metadata: undefined }));
      assert.equal(canceled.status.state, 'TASK_STATE_CANCELED');
      assert.equal(renewal.error?.code, -32004, `the watch was canceled before the renewal took: ${JSON.stringify(renewal).slice(0, 400)}`);
      const stored = Task.toJSON(await bob.getTask({ tenant: '', id, historyLength: undefined })) as WireJson;
      assert.deepEqual(stored.status, canceled.status, 'GetTask shows the CANCELED status CancelTask answered, not a renewal written over it');
    } finally {
      records.update = update;
    }
  });

  test('CancelTask racing the watch\'s expiry: the watch that expired first is not canceled too; its one COMPLETED status stands', async () => {
    const hook = await webhook(() => 200);
    const task = await sendWithPush(bob, { query: 'expired-racing' }, { url: hook.url, token: 'expired-racing' });
    const id = task.id as string;
    const records = registry.store.tasks;
    const { save, load } = records;
    // The expiry's final status is held on its way into the task (its write's first read); the
    // CancelTask comes meanwhile. It goes on once the cancel has stored a status of its own (the
    // race: a cancel that does not wait for it), or shortly after the cancel read the task (a
    // cancel that waits for it gets it then).
    let expiring = false;
    let expiryHeld = false;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    records.load = async (scope, taskId) => {
      if (taskId === id && expiring && !expiryHeld) {
        expiryHeld = true;
        await gate;
      } else if (taskId === id && expiryHeld) setTimeout(release, 300);
      return load.call(records, scope, taskId);
    };
    records.save = async (row) => {
      const kept = await save.call(records, row);
      if (row.id === id && row.status_state === 'TASK_STATE_CANCELED') release();
      return kept;
    };
    try {
      expiring = true;
      await expireNow(id);
      await eventually(async () => expiryHeld, 'the expiry being stored');
      const answer = await bob.cancelTask({ tenant: '', id, metadata: undefined }).then(
        (t) => Task.toJSON(t) as WireJson,
        (error: Error) => ({ error: error.message }),
      );
      assert.ok('error' in answer && /not cancelable/.test(String(answer.error)), `a watch that expired cannot be canceled: ${JSON.stringify(answer).slice(0, 300)}`);
      const stored = Task.toJSON(await bob.getTask({ tenant: '', id, historyLength: undefined })) as WireJson;
      assert.equal(stored.status.state, 'TASK_STATE_COMPLETED');
      assert.match(stored.status.message.parts[0].text, /expired/);
      const pushed = await hook.waitFor((body) => body.statusUpdate !== undefined, 'the final status pushed');
      assert.equal(pushed.statusUpdate.status.message.messageId, stored.status.message.messageId, 'the status the webhook got');
    } finally {
      release();
      records.save = save;
      records.load = load;
      await hook.close();
    }
  });

  test('a watch whose stored expiry cannot be read as its time comes (storage failing for a moment) is not ended as expired: it checks again, and runs on as its stored expiry says', async () => {
    const log = track(watch(bob, { query: `expiry-unread-${randomUUID().slice(0, 8)}`, initial: false }));
    const id = await taskIdOf(log);
    const running = registry.core.watches.get(id)!;
    const records = registry.store.watches;
    const get = records.get;
    records.get = async (taskId) => {
      if (taskId === id) throw new Error('database connection lost');
      return get.call(records, taskId);
    };
    try {
      // Its timer's check, as when renewed on another replica: only its stored expiry says so.
      await registry.core.watches.expiring(running);
    } finally {
      records.get = get;
    }
    // Before, it ended COMPLETED, "The watch expired (it was not renewed in time)".
    assert.ok(running.isOpen, 'the watch runs on');
    assert.equal(log.events.filter((e) => e.statusUpdate).length, 0, 'no final status');
    // Read, its stored expiry (a day ahead) stands.
    await registry.core.watches.expiring(running);
    assert.ok(running.isOpen, 'runs on as its stored expiry says');
    assert.equal((await cancel(bob, log)).state, 'TASK_STATE_CANCELED');
  });

  test('a renewal is exactly {"renew": {}}: keys inside, another value, another operation beside it and a push config are refused, and renew nothing', async () => {
    const log = track(watch(bob, { query: `renew-strict-${randomUUID().slice(0, 8)}`, initial: false }));
    const id = await taskIdOf(log);
    const expiresAt = async (): Promise<string> => (Task.toJSON(await bob.getTask({ tenant: '', id, historyLength: undefined })) as WireJson).metadata.watchExpiresAt;
    const before = await expiresAt();
    const rpc = async (data: WireJson, extra: WireJson = {}): Promise<WireJson> => {
      const res = await fetch(`${registry.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.bob}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: id, parts: [dataPart(data)] }, ...extra } }),
      });
      return (await res.json()) as WireJson;
    };
    const refusals: Array<[WireJson, RegExp, WireJson?]> = [
      [{ renew: { ttlSeconds: 60 } }, /^The "renew" arguments are not valid: \/parts\/0\/data\/renew: Unrecognized key: "ttlSeconds" \(Accepted keys here: none; send an empty object, \{\}\)\. Send \{"renew": \{\}\}\.$/],
      [{ renew: { expiresAt: '2030-01-01T00:00:00Z' } }, /Unrecognized key: "expiresAt" \(Accepted keys here: none/],
      [{ renew: 'yes' }, /^The "renew" arguments are not valid: \/parts\/0\/data\/renew: "renew" must be an object; got the string "yes"\./],
      [{ renew: null }, /"renew" must be an object; got null/],
      [{ renew: [] }, /"renew" must be an object; got a list/],
      [{ renew: {}, watch: { query: 'x' } }, /^The message carries 2 operations \(renew, watch\); send exactly one per message: a renewal is one data part \{"renew": \{\}\}/],
      [{ renew: {}, colour: 'red' }, /^Data part 0 has unknown key\(s\) "colour": a renewal is one data part \{"renew": \{\}\}/],
      [
        { renew: {} },
        /^configuration\.taskPushNotificationConfig is for a standing search .*Leave it out, or start a watch \(a webhook is added to a watch already open with CreateTaskPushNotificationConfig on its task\)\.$/,
        { configuration: { taskPushNotificationConfig: { url: 'https://hook.example.org/a2a', token: 't' } } },
      ],
    ];
    for (const [data, said, extra] of refusals) {
      const answer = await rpc(data, extra);
      assert.equal(answer.error?.code, -32602, `${JSON.stringify(data)}: ${JSON.stringify(answer).slice(0, 300)}`);
      assert.match(answer.error.message, said, JSON.stringify(data));
    }
    // Without the watch's task, a renewal says where it goes (it was refused as an unknown key, the shapes it listed without renew).
    const untasked = await fetch(`${registry.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.bob}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [dataPart({ renew: {} })] } } }),
    });
    // A rejected task, as any request the operations cannot parse (BAD_REQUEST).
    const untaskedTask = ((await untasked.json()) as WireJson).result?.task;
    assert.equal(untaskedTask?.status?.state, 'TASK_STATE_REJECTED');
    assert.match(untaskedTask.status.message.parts[0].text, /^BAD_REQUEST: Data part 0 is \{"renew": \.\.\.\} without a task: a renewal is sent on the watch it renews, in a message whose taskId is the watch's task id/);
    // Before, each of them renewed the watch for its full time to live.
    assert.equal(await expiresAt(), before, 'none of them renewed the watch');
    const renewed = await rpc({ renew: {} });
    assert.equal(renewed.result?.task?.status?.state, 'TASK_STATE_WORKING', JSON.stringify(renewed));
    assert.ok(Date.parse(renewed.result.task.metadata.watchExpiresAt) >= Date.parse(before));
    await cancel(bob, log);
  });

  test('CLI: a2a-registry watch prints the initial matches and then events as JSON lines', async () => {
    const existing = resultOf(await op(alice, { register: { agentCard: card('Cli Watched One', 'https://cli1.example.org/a2a', ['cli-watch']) } }));
    // --timeout bounds every other answer whole; a watch's stream outlives it.
    // (1 s: the card and the stream's headers must arrive within it, on a loaded machine too.)
    const { child, exited, waitLine, stderr } = cliWatch(registry.url, 'cli-watch', ['--timeout', '1']);
    try {
      const initial = await waitLine((l) => l.event === 'initial', 'initial line', 20_000);
      assert.deepEqual(initial.results.map((h: WireJson) => h.id), [existing.id]);
      await new Promise((resolve) => setTimeout(resolve, 1200)); // past the timeout: the time passing is the point
      const next = resultOf(await op(alice, { register: { agentCard: card('Cli Watched Two', 'https://cli2.example.org/a2a', ['cli-watch']) } }));
      const added = await waitLine((l) => l.event === 'added', 'added line', 20_000);
      assert.equal(added.hit.id, next.id);
      assert.doesNotMatch(stderr(), /the stream was cut/, 'the watch was never cut (and resumed) by the timeout');
      // Ctrl-C cancels the watch on the registry: none of bob's watches is left open.
      child.kill('SIGINT');
      await exited;
      assert.equal(registry.core.watches.countFor('bob'), 0);
    } finally {
      child.kill();
    }
    // So do SIGTERM (`timeout 60 a2a-registry watch ...`, a service manager stopping it) and a
    // reader that went away (`| grep -m1 added`): the watch was left open, counting against
    // REGISTRY_MAX_WATCHES for a day.
    const terminated = cliWatch(registry.url, 'cli-watch');
    const piped = cliWatch(registry.url, 'cli-watch');
    const exitCode = (w: typeof piped) => new Promise<number | null>((resolve) => w.child.once('exit', (code) => resolve(code)));
    try {
      await Promise.all([terminated, piped].map((w) => w.waitLine((l) => l.event === 'initial', 'initial line', 20_000)));
      assert.equal(registry.core.watches.countFor('bob'), 2);
      const [terminatedExit, pipedExit] = [exitCode(terminated), exitCode(piped)];
      terminated.child.kill('SIGTERM');
      assert.equal(await terminatedExit, 143, terminated.stderr());
      assert.equal(registry.core.watches.countFor('bob'), 1);
      piped.child.stdout!.destroy();
      // The next event the watch prints finds its pipe closed.
      await op(alice, { register: { agentCard: card('Cli Watched Three', 'https://cli3.example.org/a2a', ['cli-watch']) } });
      assert.equal(await pipedExit, 0, piped.stderr());
      assert.equal(registry.core.watches.countFor('bob'), 0);
    } finally {
      terminated.child.kill('SIGKILL');
      piped.child.kill('SIGKILL');
    }
  });

  test('push: a plain SendMessage with a push config starts a watch whose events are POSTed to the webhook with the token', async () => {
    const hook = await webhook(() => 200);
    try {
      const target = resultOf(await op(alice, { register: { agentCard: card('Pushed First', 'https://pushed1.example.org/a2a', ['pushed']) } }));
      const task = await sendWithPush(bob, { filter: { tags: ['pushed'] } }, { url: hook.url, token: 'client-token-1' });
      assert.equal(stateOf(task), 'TASK_STATE_WORKING', 'the answer is the WORKING task');
      const initial = await hook.waitFor((b) => b.artifactUpdate?.artifact?.name === 'watch-results', 'initial matches pushed');
      assert.deepEqual(dataOf(initial.artifactUpdate.artifact).results.map((h: WireJson) => h.id), [target.id]);
      const second = resultOf(await op(alice, { register: { agentCard: card('Pushed Second', 'https://pushed2.example.org/a2a', ['pushed']) } }));
      const pushed = await hook.waitFor((b) => b.artifactUpdate?.artifact?.name === 'watch-event', 'added pushed');
      assert.equal(dataOf(pushed.artifactUpdate.artifact).event, 'added');
      assert.equal(dataOf(pushed.artifactUpdate.artifact).hit.id, second.id);
      const canceled = await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      assert.equal(canceled.status?.state, 5 /* CANCELED */);
      // The end is pushed too, as a stream ends with it: a push-only client learns the watch is over.
      const final = await hook.waitFor((b) => b.statusUpdate !== undefined, 'final status pushed');
      assert.equal(final.statusUpdate.taskId, task.id);
      assert.equal(final.statusUpdate.status.state, 'TASK_STATE_CANCELED');
      assert.ok(hook.requests.every((r) => r.token === 'client-token-1'), 'every notification carries the client token');
      // A2A 4.3.3: a v1.0 notification is application/a2a+json (it was application/json).
      assert.deepEqual([...new Set(hook.requests.map((r) => r.contentType))], ['application/a2a+json']);
    } finally {
      await hook.close();
    }
  });

  test('push: a watch whose push config cannot be stored with it (storage failing) is not started: its webhook would be forgotten at the next restart', async () => {
    const hook = await webhook(() => 200);
    const records = registry.store.watches;
    const update = records.update;
    const query = `unstored-config-${randomUUID().slice(0, 8)}`;
    let failedId: string | undefined;
    records.update = async (id, change) => {
      if (change.pushConfigs !== undefined && registry.core.watches.get(id)?.request.query === query) {
        failedId = id;
        throw new Error('disk I/O error');
      }
      return update.call(records, id, change);
    };
    try {
      // Before, it was answered WORKING and pushed to, its config in memory only: after a restart
      // it ran on (its task WORKING) with no webhook, and the client never knew.
      const answer = await sendWithPush(bob, { query }, { url: hook.url, token: 't' }).then(
        (task) => stateOf(task),
        (error: unknown) => String(error),
      );
      assert.notEqual(answer, 'TASK_STATE_WORKING', 'the watch is not started');
      assert.match(answer, /FAILED|try again later/i);
      assert.ok(failedId, 'the watch was being started');
      assert.equal(registry.core.watches.get(failedId), undefined, 'not kept');
      assert.equal(await records.get(failedId), undefined, 'its definition is removed');
    } finally {
      records.update = update;
      await hook.close();
    }
  });

  test('push: the wall clock stepping forward (NTP) between a failed notification and its retry does not end the retry window at once', async (t) => {
    const realNow = Date.now;
    t.after(() => void (Date.now = realNow));
    let answered = 0;
    const hook = await webhook(() => {
      if (++answered > 1) return 200;
      // The first attempt fails, and the registry's clock (this process's) jumps ten minutes ahead before the retry.
      Date.now = () => realNow() + 600_000;
      return 500;
    });
    try {
      const task = await sendWithPush(bob, { filter: { tags: ['push-clock-forward'] } }, { url: hook.url, token: 't' });
      // Polled by count, not by Date.now, which this test moves.
      for (let polls = 0; hook.requests.length < 2 && polls < 100; polls++) await new Promise((resolve) => setTimeout(resolve, 50));
      Date.now = realNow;
      assert.equal(hook.requests.length, 2, 'the notification was retried');
      assert.equal(hook.requests[1]!.body.artifactUpdate?.artifact?.name, 'watch-results', `the retry carries the initial matches, not the watch's end: ${JSON.stringify(hook.requests[1]!.body).slice(0, 300)}`);
      const current = (await bob.getTask({ tenant: '', id: task.id, historyLength: undefined })) as unknown as WireJson;
      assert.equal(current.status?.state, TaskState.TASK_STATE_WORKING, JSON.stringify(current.status));
      await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    } finally {
      Date.now = realNow;
      await hook.close();
    }
  });

  test('push: a webhook that falls more than REGISTRY_WATCH_BUFFER events behind gets a resync instead of an ever longer queue; the webhooks keeping up do not', async () => {
    // 300 ms an answer: ten quick registrations outrun it (the buffer here is 3).
    const hook = await webhook(() => 200, undefined, 300);
    const keepingUp = await webhook(() => 200);
    try {
      const task = await sendWithPush(bob, { filter: { tags: ['push-slow'] }, initial: false }, { url: hook.url, token: 't' });
      await bob.createTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'keeping-up', url: keepingUp.url, token: 'k', authentication: undefined });
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        ids.push(resultOf(await op(alice, { register: { agentCard: card(`Slow Hook Target ${i}`, `https://slow-hook-${i}.example.org/a2a`, ['push-slow']) } })).id);
      }
      const eventOf = (b: WireJson): WireJson | undefined => (b.artifactUpdate?.artifact?.name === 'watch-event' ? dataOf(b.artifactUpdate.artifact) : undefined);
      const resync = eventOf(await hook.waitFor((b) => eventOf(b)?.event === 'resync', 'resync pushed'))!;
      assert.deepEqual(resync.results.map((h: WireJson) => h.id).sort(), [...ids].sort(), 'the resync holds every current match');
      const pushed = hook.requests.map((r) => eventOf(r.body)).filter((e): e is WireJson => e !== undefined);
      assert.ok(pushed.filter((e) => e.event === 'added').length < ids.length, `not every event was queued: ${pushed.map((e) => e.event)}`);
      const seqs = pushed.map((e) => e.seq as number);
      assert.deepEqual(seqs, [...new Set(seqs)].sort((a, b) => a - b), 'in order, rising');
      // The webhook that kept up missed nothing: every event, numbered without a gap, and no
      // resync (before, the lagging webhook's resync was emitted to the whole watch).
      await keepingUp.waitFor((b) => eventOf(b)?.hit?.id === ids[9], 'the last event at the webhook keeping up');
      const kept = keepingUp.requests.map((r) => eventOf(r.body)).filter((e): e is WireJson => e !== undefined);
      assert.deepEqual(kept.map((e) => e.event), ids.map(() => 'added'), `only the events: ${kept.map((e) => e.event)}`);
      assert.deepEqual(kept.map((e) => e.hit.id), ids);
      assert.deepEqual(kept.map((e) => e.seq - kept[0].seq), ids.map((_, i) => i), 'numbered without a gap');
      assert.ok(resync.seq <= kept[kept.length - 1].seq, 'the resync is numbered as the last event it stands for');
      await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    } finally {
      await hook.close();
      await keepingUp.close();
    }
  });

  test('push: a watch started by a v0.3 client pushes v0.3 Tasks to its webhook (A2A 0.3 9.5), each with its event\'s artifact; a config added over v1.0 gets v1.0 StreamResponses', async () => {
    const hook03 = await webhook(() => 200);
    const hook10 = await webhook(() => 200);
    try {
      const target = resultOf(await op(alice, { register: { agentCard: card('Pushed Legacy First', 'https://legacy1.example.org/a2a', ['pushed-v03']) } }));
      const task = await sendWithPush03(registry.url, TOKENS.bob, { filter: { tags: ['pushed-v03'] } }, { url: hook03.url, token: 'v03-token' });
      assert.equal(task.status.state, 'working');
      // Before, the webhook got v1.0's StreamResponse ({"artifactUpdate": ...}), which a v0.3
      // receiver does not read; then v0.3's bare event ({"kind": "artifact-update", ...}), which
      // is not what v0.3 POSTs either: "Task object is sent as JSON payload" (A2A 0.3 9.5).
      const initial = await hook03.waitFor((b) => b.kind === 'task' && b.artifacts?.[0]?.name === 'watch-results', 'initial matches pushed as a v0.3 Task');
      assert.equal(initial.id, task.id);
      assert.equal(initial.contextId, task.contextId);
      assert.equal(initial.status.state, 'working');
      // Dated, as every status the registry sends is (it had no timestamp): an ISO 8601 time in UTC, now.
      const dated = (t: WireJson) => typeof t.status.timestamp === 'string' && /Z$/.test(t.status.timestamp) && Math.abs(Date.parse(t.status.timestamp) - Date.now()) < 60_000;
      assert.ok(dated(initial), `the WORKING status has its time: ${JSON.stringify(initial.status)}`);
      assert.deepEqual(v03EventData(initial)?.results.map((h: WireJson) => h.id), [target.id]);
      // A second webhook, configured over v1.0 on the same watch, gets v1.0 payloads.
      const created = await bob.createTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'v1-hook', url: hook10.url, token: 'v10-token', authentication: undefined });
      assert.equal(created.id, 'v1-hook');
      const second = resultOf(await op(alice, { register: { agentCard: card('Pushed Legacy Second', 'https://legacy2.example.org/a2a', ['pushed-v03']) } }));
      // The event's own artifact only: not the initial matches, nor any event before it.
      const added03 = await hook03.waitFor((b) => b.kind === 'task' && b.artifacts?.some((a: WireJson) => a.name === 'watch-event'), 'added pushed as a v0.3 Task');
      assert.deepEqual(added03.artifacts.map((a: WireJson) => a.name), ['watch-event']);
      const event03 = v03EventData(added03)!;
      assert.equal(event03.event, 'added');
      assert.equal(event03.hit.id, second.id);
      assert.equal(added03.status.state, 'working');
      assert.ok(dated(added03), `the WORKING status has its time: ${JSON.stringify(added03.status)}`);
      assert.ok(added03.status.timestamp >= initial.status.timestamp, 'the later event, the later time');
      const added10 = await hook10.waitFor((b) => b.artifactUpdate?.artifact?.name === 'watch-event', 'added pushed as v1.0');
      assert.equal(dataOf(added10.artifactUpdate.artifact).hit.id, second.id);
      await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      // The end too: the Task in its final status, lowercase state, with the status message.
      const final03 = await hook03.waitFor((b) => b.kind === 'task' && b.status?.state !== 'working', 'final status pushed as a v0.3 Task');
      assert.equal(final03.id, task.id);
      assert.equal(final03.status.state, 'canceled');
      assert.equal(final03.status.message?.kind, 'message');
      assert.equal(final03.artifacts, undefined);
      assert.equal((await hook10.waitFor((b) => b.statusUpdate !== undefined, 'final status pushed as v1.0')).statusUpdate.status.state, 'TASK_STATE_CANCELED');
      // Each one a Task as the official v0.3 schema defines it, with the client's token.
      for (const r of hook03.requests) assertV03Task(r.body);
      assert.ok(hook03.requests.every((r) => r.body.id === task.id && r.token === 'v03-token'), JSON.stringify(hook03.requests).slice(0, 300));
      assert.ok(hook10.requests.every((r) => r.body.kind === undefined && r.token === 'v10-token'));
      // Each in its generation's media type: v0.3's application/json, v1.0's application/a2a+json.
      assert.ok(hook03.requests.every((r) => r.contentType === 'application/json'));
      assert.ok(hook10.requests.every((r) => r.contentType === 'application/a2a+json'));
    } finally {
      await hook03.close();
      await hook10.close();
    }
  });

  test('push: a webhook on an address the guard refuses is an error when it is configured', async () => {
    await assert.rejects(sendWithPush(bob, { query: 'x' }, { url: 'http://10.0.0.1/hook', token: 't' }), /refused/i);
  });
});

// Pushes that wait for a webhook's retries (REGISTRY_WEBHOOK_RETRY_SECONDS) or slow answers: each
// test mostly waits, on a watch and webhooks of its own, so they run side by side, on a registry
// of their own (the one above caps bob at two watches).
describe('standing searches: webhooks retried, slow or chatty', { concurrency: true }, () => {
  let registry: TestRegistry;
  let alice: Client;
  let bob: Client;
  /** Where the registry resolves names (REGISTRY_DNS_SERVERS): a webhook's name may move. */
  let dns: DnsServer;

  before(async () => {
    dns = await startDnsServer();
    // Webhook retries for 1.75 s: waits of 0.25, 0.5 and 1 s, so 4 attempts (the tests wait out
    // the window, so it is as short as shows doubling waits and a last attempt).
    registry = await startTestRegistry({
      REGISTRY_WATCH_BUFFER: '3',
      REGISTRY_FETCH_ALLOW: '127.0.0.1',
      REGISTRY_WEBHOOK_RETRY_SECONDS: '1.75',
      REGISTRY_DNS_SERVERS: dns.address,
    });
    alice = await sdkClient(registry.url, { token: TOKENS.alice });
    bob = await sdkClient(registry.url, { token: TOKENS.bob });
  });
  after(async () => {
    await registry.close();
    await dns.close();
    removeTempDir(registry.dataDir);
  });

  test('push: a token goes over plain http only to an address the operator allows when it is sent, not only when the config was given', async () => {
    const hook = await webhook(() => 200);
    try {
      // Accepted: hook.test resolves to 127.0.0.1, which REGISTRY_FETCH_ALLOW lists.
      dns.set('hook.test', ['127.0.0.1']);
      const url = `http://hook.test:${new URL(hook.url).port}/hook`;
      const task = await sendWithPush(bob, { filter: { tags: ['push-dns-moved'] } }, { url, token: 'dns-moved-token' });
      await hook.waitFor((b) => b.artifactUpdate?.artifact?.name === 'watch-results', 'the initial matches pushed');
      assert.equal(hook.requests[0]!.token, 'dns-moved-token');
      // The name now resolves to a public address the operator does not allow: the next event's
      // token would cross the internet unencrypted. Refused before connecting, as when the config is given.
      dns.set('hook.test', ['93.184.215.14']);
      await op(alice, { register: { agentCard: card('Dns Moved', 'https://dns-moved.example.org/a2a', ['push-dns-moved']) } });
      let status: WireJson = {};
      await eventually(async () => {
        status = ((await bob.getTask({ tenant: '', id: task.id, historyLength: undefined })) as unknown as WireJson).status ?? {};
        return status.state === TaskState.TASK_STATE_FAILED;
      }, 'the watch ends FAILED');
      const reason = JSON.stringify(status.message ?? {});
      assert.match(
        reason,
        /Push notifications to http:\/\/hook\.test:\d+\/hook failed: event \d+ was not accepted .*\(last: refused to send to http:\/\/hook\.test:\d+\/hook: The push notification URL is plain http, and the config carries a token, which every notification would send unencrypted across the network, .*REGISTRY_WEBHOOK_HTTP_CREDENTIALS=true\.\)\)/,
        reason,
      );
      assert.equal(hook.requests.length, 1, 'only the initial matches, sent while the name resolved to the allowed address');
    } finally {
      await hook.close();
    }
  });

  test('push: a webhook that keeps failing is retried, then the watch ends FAILED with the reason; the other webhooks are told it naming the failed one without its path and query', async () => {
    const hook = await webhook(() => 500);
    const other = await webhook(() => 200);
    try {
      // A webhook's path and query are often its secret (Slack's /services/T…/B…/…, ?token=…).
      const task = await sendWithPush(bob, { filter: { tags: ['push-fails'] } }, { url: `${hook.url}/SecretHookPath?key=SecretHookKey`, token: 't' });
      await bob.createTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'other', url: other.url, token: 'o', authentication: undefined });
      // The initial matches (none) are pushed first: 4 attempts over REGISTRY_WEBHOOK_RETRY_SECONDS, then FAILED.
      const deadline = Date.now() + 10_000;
      let state = '';
      let reason = '';
      while (Date.now() < deadline) {
        const current = (await bob.getTask({ tenant: '', id: task.id, historyLength: undefined })) as unknown as WireJson;
        state = String(current.status?.state);
        reason = JSON.stringify(current.status?.message ?? {});
        if (state === '4') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(state, '4', 'TASK_STATE_FAILED');
      assert.match(reason, /Push notifications to .* failed: the initial matches were not accepted within 1\.75 s \(REGISTRY_WEBHOOK_RETRY_SECONDS\)/);
      // Then the final status, attempted once (the webhook has had its attempts).
      const final = await hook.waitFor((b) => b.statusUpdate !== undefined, 'final status pushed');
      assert.equal(final.statusUpdate.status.state, 'TASK_STATE_FAILED');
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Retried with doubling waits (0.25, 0.5, then what is left of the 1.75 s window, up to 1 s):
      // four attempts, or three when a loaded machine made the first three outlast the window.
      const initial = hook.requests.filter((r) => r.body.statusUpdate === undefined);
      const gaps = initial.slice(1).map((r, i) => r.at - initial[i]!.at);
      assert.ok(initial.length === 4 || initial.length === 3, `${initial.length} attempts at the initial matches, ${gaps.join(', ')} ms apart`);
      assert.ok(gaps[0]! >= 245 && gaps[1]! >= 495, `waits of at least 250 and 500 ms: ${gaps.join(', ')} ms`);
      assert.ok(gaps.every((gap) => gap <= 1000 + 1000), `no wait longer than the backoff's 1 s (and a loaded machine's delay): ${gaps.join(', ')} ms`);
      assert.equal(hook.requests.length, initial.length + 1, 'then one attempt at the final status, the last request');
      assert.notEqual(hook.requests.at(-1)!.body.statusUpdate, undefined);
      // The other webhook's receiver, someone else than the watch's owner, gets that status too: the
      // failed one named by its config's id and its origin (its full URL went there, twice; the
      // owner's GetTask keeps it, hardening-observability.test).
      const pushed = await other.waitFor((b) => b.statusUpdate !== undefined, 'final status pushed to the other webhook');
      const told = String(pushed.statusUpdate.status.message.parts[0].text);
      const origin = new URL(hook.url).origin.replace(/\./g, '\\.');
      assert.match(told, new RegExp(`^Push notifications to the webhook of push config "[^"]+" \\(${origin}/…\\) failed: the initial matches were not accepted within 1\\.75 s \\(REGISTRY_WEBHOOK_RETRY_SECONDS\\) ${lastAttempt(`${origin}/…`, 'HTTP 500 Internal Server Error')}\\. The watch ended\\.$`), told);
      assert.equal(pushed.statusUpdate.status.message.messageId, JSON.parse(reason).messageId, 'the same status message, as the owner has it');
      assert.doesNotMatch(JSON.stringify(other.requests), /SecretHook/, 'neither its path nor its query');
    } finally {
      await hook.close();
      await other.close();
    }
  });

  test('push: a webhook that stops answering is given up within REGISTRY_WEBHOOK_RETRY_SECONDS, its requests included, and told so with what it answered before', async () => {
    // Each attempt waited a whole fetch timeout (5 s) on top of the window's waits: 1.75 s took 22 s.
    // It answers its first request 503, then none.
    let hits = 0;
    /** When the first attempt arrived: the window had begun by then. */
    let firstAt = 0;
    const silent = http.createServer((_req, res) => {
      if (hits++ > 0) return;
      firstAt = performance.now();
      res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const task = await sendWithPush(bob, { filter: { tags: ['push-hangs'] } }, { url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook`, token: 't' });
      let current: WireJson = {};
      await eventually(async () => (current = (await bob.getTask({ tenant: '', id: task.id, historyLength: undefined })) as unknown as WireJson).status?.state === TaskState.TASK_STATE_FAILED, 'the watch FAILED', 15_000);
      // Timed from the first attempt, not from the request that made the watch: the window starts
      // once the registry has loaded its HTTP client (Fetcher.ready), and that request and that
      // loading took 1.5 s or more of a loaded machine's time before it (the check failed for them).
      const took = performance.now() - firstAt;
      assert.ok(firstAt > 0 && took < 4500, `FAILED ${Math.round(took)} ms after the first attempt: the hanging attempt is cut at the 1.75 s window's end, not left to the fetch timeout (5 s)`);
      assert.ok(hits >= 2, `retried (${hits} requests)`);
      // The last attempt was cut by the window, and is told so, with the answer before it. Before,
      // it was told as the fetch timeout ("within 5000 ms (the registry's fetch timeout)"), and
      // what the webhook had answered (a redirect, say: the thing to fix) was lost.
      const reason = JSON.stringify(current.status?.message);
      assert.match(reason, /\(last: no complete answer from http:\/\/127\.0\.0\.1:\d+\/hook within \d+ ms, when the retry window \(REGISTRY_WEBHOOK_RETRY_SECONDS\) ended \(the attempt before it: http:\/\/127\.0\.0\.1:\d+\/hook answered HTTP 503 Service Unavailable\)\)/, reason);
      assert.doesNotMatch(reason, /5000 ms|fetch timeout/, reason);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  test('push: a webhook down for a moment (a restart, a deploy) is retried through it, and the watch goes on', async (t) => {
    // Down for the first two attempts (counted, not timed: a loaded machine cannot make the
    // outage miss the retries). On a registry of its own whose retry window is long (10 s): in the
    // file's 1.75 s window the third attempt, 0.75 s in, still had to finish within a second, which
    // a CI machine at load 18 did not give it (the watch ended FAILED for the machine's load). What
    // a window that ends does is the tests' above.
    const own = await startTestRegistry({ REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_WEBHOOK_RETRY_SECONDS: '10' });
    t.after(async () => {
      await own.close();
      removeTempDir(own.dataDir);
    });
    const ownAlice = await sdkClient(own.url, { token: TOKENS.alice });
    const ownBob = await sdkClient(own.url, { token: TOKENS.bob });
    let answered = 0;
    const hook = await webhook(() => (++answered < 3 ? 503 : 200));
    try {
      const task = await sendWithPush(ownBob, { filter: { tags: ['push-restarts'] } }, { url: hook.url, token: 't' });
      const initial = await hook.waitFor((b) => b.artifactUpdate?.artifact?.name === 'watch-results', 'initial matches tried');
      assert.ok(initial);
      await eventually(async () => hook.requests.length >= 3, 'the retries have ridden out the outage');
      assert.equal(hook.requests.length, 3, 'two attempts refused, the third taken');
      const current = (await ownBob.getTask({ tenant: '', id: task.id, historyLength: undefined })) as unknown as WireJson;
      assert.equal(current.status?.state, TaskState.TASK_STATE_WORKING, JSON.stringify(current.status));
      const added = resultOf(await op(ownAlice, { register: { agentCard: card('After Restart', 'https://after-restart.example.org/a2a', ['push-restarts']) } }));
      const pushed = await hook.waitFor((b) => b.artifactUpdate?.artifact?.name === 'watch-event', 'the next event pushed');
      assert.equal(dataOf(pushed.artifactUpdate.artifact).hit.id, added.id);
      await ownBob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    } finally {
      await hook.close();
    }
  });

  test("push: a webhook that answers 503 with Retry-After is not asked again before then (the backoff's own wait if longer), nor past the retry window", async () => {
    // Down, asking for 1 s each time (the backoff alone retries after 0.25, 0.5 and 1 s); each answer timed as it is given.
    const answeredAt: number[] = [];
    const hook = await webhook(() => (answeredAt.push(Date.now()), 503), undefined, 0, { 'Retry-After': '1' });
    try {
      // Alice's watch: bob's, in the tests beside this one, are as many as REGISTRY_MAX_WATCHES allows.
      const sentAt = Date.now();
      const task = await sendWithPush(alice, { filter: { tags: ['push-retry-after'] } }, { url: hook.url, token: 't' });
      await eventually(async () => answeredAt.length >= 2, 'the initial matches sent again');
      // Not before the 1 s asked, unless the window (1.75 s, begun after sentAt) ended sooner: a
      // loaded machine may take most of it to make the first attempt.
      const waited = answeredAt[1]! - answeredAt[0]!;
      const least = Math.min(1000, sentAt + 1750 - answeredAt[0]!);
      assert.ok(waited >= least - 5, `asked again ${waited} ms after a 503 asking for 1 s (the window had at least ${least} ms left)`);

      const statusNow = async (): Promise<WireJson> => ((await alice.getTask({ tenant: '', id: task.id, historyLength: undefined })) as unknown as WireJson).status ?? {};
      await eventually(async () => (await statusNow()).state === TaskState.TASK_STATE_FAILED, 'the watch FAILED at the end of its window');
      const reason = JSON.stringify((await statusNow()).message ?? {});
      assert.match(reason, new RegExp(`within 1\\.75 s \\(REGISTRY_WEBHOOK_RETRY_SECONDS\\) ${lastAttempt(literally(hook.url), 'HTTP 503 Service Unavailable \\(Retry-After: 1\\)')}\\. The watch ended\\.`), reason);
      await hook.waitFor((b) => b.statusUpdate !== undefined, 'the final status pushed');
      // At most three attempts at the initial matches (at 0 and 1 s, and the last at the window's
      // end, sooner than asked: the window bounds the wait), not the backoff's four.
      const attempts = hook.requests.filter((r) => r.body.statusUpdate === undefined).length;
      assert.ok(attempts <= 3, `${attempts} attempts, answered at ${answeredAt.map((t) => t - answeredAt[0]!).join(', ')} ms`);
    } finally {
      await hook.close();
    }
  });

  test('push: deleting the config of a webhook that is being retried stops its retries, and the watch goes on', async () => {
    const broken = await webhook(() => 500);
    try {
      const task = await sendWithPush(bob, { filter: { tags: ['push-delete-retry'] } }, { url: broken.url, token: 't' });
      await broken.waitFor(() => true, 'a first attempt');
      const [config] = (await bob.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs;
      await bob.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: config!.id });
      const attempts = broken.requests.length;
      // Past the whole retry window (1.75 s here): before, the retries went on and the watch ended FAILED for a webhook it no longer had.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      assert.ok(broken.requests.length <= attempts + 1, `${broken.requests.length - attempts} attempts after the delete`);
      const current = (await bob.getTask({ tenant: '', id: task.id, historyLength: undefined })) as unknown as WireJson;
      assert.equal(current.status?.state, TaskState.TASK_STATE_WORKING, JSON.stringify(current.status));
      await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    } finally {
      await broken.close();
    }
  });

  test('push: canceling a watch whose webhook is being retried ends it at once, without waiting out the retries', async () => {
    const hook = await webhook(() => 500);
    try {
      const task = await sendWithPush(bob, { filter: { tags: ['push-cancel-retry'] } }, { url: hook.url, token: 't' });
      await hook.waitFor(() => true, 'a first attempt');
      const started = Date.now();
      const canceled = await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
      const events = () => hook.requests.filter((r) => r.body.artifactUpdate !== undefined).length;
      const attempts = events();
      await new Promise((resolve) => setTimeout(resolve, 500));
      // The final status waits between its attempts too (0.25 s, then 0.5 s, ...), not all at once.
      const early = hook.requests.filter((r) => r.body.statusUpdate !== undefined).length;
      assert.ok(early >= 1 && early <= 3, `${early} attempts at the final status within 0.5 s`);
      await new Promise((resolve) => setTimeout(resolve, 1750));
      // No attempt at the watch's notification after the cancel (its waits ended with the watch);
      // the final status is retried on its own, over the same window, with its waits.
      assert.equal(events(), attempts, 'no retry of the notification after the cancel');
      const finals = hook.requests.filter((r) => r.body.statusUpdate !== undefined);
      assert.ok(finals.length >= 2 && finals.length <= 4, `${finals.length} attempts at the final status`);
      assert.ok(finals.every((r) => r.body.statusUpdate.status.state === 'TASK_STATE_CANCELED'));
      assert.ok(Date.now() - started < 10_000);
    } finally {
      await hook.close();
    }
  });

  test('push: a webhook that accepts with a long answer body has its notifications delivered once, and the watch goes on', async () => {
    // 64 KB, past the body cap (the document size limit): the answer's body is not read.
    const hook = await webhook(() => 200, 'x'.repeat(64 * 1024));
    try {
      const task = await sendWithPush(bob, { filter: { tags: ['push-chatty'] } }, { url: hook.url, token: 't' });
      await hook.waitFor((b) => b.artifactUpdate?.artifact?.name === 'watch-results', 'initial matches pushed');
      const entry = resultOf(await op(alice, { register: { agentCard: card('Chatty Hook Target', 'https://chatty.example.org/a2a', ['push-chatty']) } }));
      const pushed = await hook.waitFor((b) => b.artifactUpdate?.artifact?.name === 'watch-event', 'added pushed');
      assert.equal(dataOf(pushed.artifactUpdate.artifact).hit.id, entry.id);
      // Retries would have come 250 ms and more apart: give them the time to show.
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal(hook.requests.length, 2, 'each notification once, no retries');
      const current = (await bob.getTask({ tenant: '', id: task.id, historyLength: undefined })) as unknown as WireJson;
      assert.equal(current.status?.state, TaskState.TASK_STATE_WORKING);
      await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    } finally {
      await hook.close();
    }
  });

  test('push: a webhook that accepts in a Content-Encoding the registry does not decode (zstd, a misconfigured none) has each notification delivered once', async () => {
    // Before, the guard refused such an answer at its headers, a 2xx included, and the
    // notification was sent again and again: a 2xx is a delivery, its body unread.
    const zstd = await webhook(() => 200, 'not read', 0, { 'content-encoding': 'zstd' });
    const none = await webhook(() => 200, 'not read', 0, { 'content-encoding': 'none' });
    try {
      const tasks = [];
      for (const hook of [zstd, none]) tasks.push(await sendWithPush(bob, { filter: { tags: ['push-coded'] } }, { url: hook.url, token: 't' }));
      for (const hook of [zstd, none]) await hook.waitFor((b) => b.artifactUpdate?.artifact?.name === 'watch-results', `initial matches pushed to ${hook === zstd ? 'zstd' : 'none'}`);
      // Retries would have come 250 ms and more apart: give them the time to show.
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal(zstd.requests.length, 1, 'the initial matches once, in zstd');
      assert.equal(none.requests.length, 1, 'the initial matches once, in "none"');
      for (const task of tasks) {
        const current = (await bob.getTask({ tenant: '', id: task.id, historyLength: undefined })) as unknown as WireJson;
        assert.equal(current.status?.state, TaskState.TASK_STATE_WORKING);
        await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      }
    } finally {
      await zstd.close();
      await none.close();
    }
  });

  test('push: a slow webhook delays only itself: the other webhooks of the watch get each event at once, each in order', async () => {
    // 1 s an answer: before, every webhook of the watch waited for it, event after event.
    const slow = await webhook(() => 200, undefined, 1000);
    const fast = await webhook(() => 200);
    try {
      const task = await sendWithPush(bob, { filter: { tags: ['push-one-slow'] }, initial: false }, { url: slow.url, token: 'slow' });
      await bob.createTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'fast', url: fast.url, token: 'fast', authentication: undefined });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push(resultOf(await op(alice, { register: { agentCard: card(`One Slow Target ${i}`, `https://one-slow-${i}.example.org/a2a`, ['push-one-slow']) } })).id);
      }
      const hitOf = (b: WireJson): string | undefined => (b.artifactUpdate?.artifact?.name === 'watch-event' ? dataOf(b.artifactUpdate.artifact).hit?.id : undefined);
      await fast.waitFor((b) => hitOf(b) === ids[2], 'the third event at the fast webhook');
      assert.ok(slow.requests.length < 3, `the fast webhook had every event before the slow one was sent the third (slow had ${slow.requests.length})`);
      await slow.waitFor((b) => hitOf(b) === ids[2], 'the third event at the slow webhook');
      for (const hook of [fast, slow]) assert.deepEqual(hook.requests.map((r) => hitOf(r.body)), ids, 'each webhook gets the events in order');
      await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      for (const hook of [fast, slow]) assert.equal((await hook.waitFor((b) => b.statusUpdate !== undefined, 'final status')).statusUpdate.status.state, 'TASK_STATE_CANCELED');
    } finally {
      await slow.close();
      await fast.close();
    }
  });
});

/** A JSON-RPC POST on a connection of its own, closed after the answer: nothing of it stays with the client. */
function postOnce(url: string, body: string, token: string): Promise<WireJson> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(JSON.parse(text) as WireJson));
    });
    req.on('error', reject).end(body);
  });
}

describe('standing searches: a webhook retried while the watch runs on', () => {
  test('a notification retried holds nothing of the request whose change made it, however long the watch runs', async (t) => {
    // A retry 0.25 s after a refusal; bodies up to 4 MiB, so that each registration's is one to see in the heap.
    const registry = await startTestRegistry({ REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_WEBHOOK_RETRY_SECONDS: '1', REGISTRY_MAX_BODY_BYTES: String(4 * 1024 * 1024) });
    t.after(async () => {
      await registry.close();
      removeTempDir(registry.dataDir);
    });
    const bob = await sdkClient(registry.url, { token: TOKENS.bob });
    // Every first attempt of a notification refused, its retry taken: the watch runs on.
    let hits = 0;
    const hook = await webhook(() => (++hits % 2 === 1 ? 503 : 200));
    t.after(() => hook.close());
    const tag = `retried-${randomUUID().slice(0, 8)}`;
    const task = await sendWithPush(bob, { filter: { tags: [tag] }, initial: false }, { url: hook.url, token: 't' });
    // Registrations, each request carrying 1 MB in a parameter nothing reads, each an event retried once.
    const pad = 'x'.repeat(1024 * 1024);
    let registered = 0;
    const register = async (count: number) => {
      for (const last = registered + count; registered < last; registered++) {
        const i = registered;
        const body = { jsonrpc: '2.0', id: i, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data: { register: { agentCard: card(`Retried ${i}`, `https://retried-${i}.example.org/a2a`, [tag]) } }, mediaType: 'application/json' }] }, pad } };
        const answer = await postOnce(`${registry.url}/a2a/jsonrpc`, JSON.stringify(body), TOKENS.alice);
        assert.equal(answer.result?.task?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(answer).slice(0, 500));
      }
      await eventually(async () => hits >= 2 * registered, `each event refused once, then taken (${hits} requests)`);
      return heapAfterGc();
    };
    // From the fifth on: what holds the last few registrations for a while whatever the watch does is full by then.
    const before = await register(4);
    const held = (await register(12)) - before;
    t.diagnostic(`twelve more retried events hold ${(held / 1e6).toFixed(2)} MB more`);
    // Each retry's wait raced the watch's end, a reaction that stayed with the async context of the
    // registration whose change made the event, its body among it: about 0.9 MB an event (twelve
    // held 14.4 MB, 2.7 MB without it; Node.js 24). On Node.js 22 each attempt's cut at the end of
    // the retry window (AbortSignal.timeout) did the same for the window's length, a minute by
    // default (here a second, the events all within it): twelve held 12.2 MB, 1.5 MB without it.
    // What else holds the last registrations for a moment does not grow with their number.
    assert.ok(held < 8e6, `twelve more retried events hold ${(held / 1e6).toFixed(2)} MB more`);
    await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
  });
});

describe('standing searches: the first push of a registry process', () => {
  test("push: a registry's first notification is not cut by the retry window for the registry's own loading of its HTTP client", async () => {
    // The outbound fetcher loads undici on its first request (a second or two on a loaded
    // machine): counted in the window, the first notification after a start could fail for it,
    // the watch FAILED though its receiver answered at once. A process of its own (the test's
    // has loaded undici long ago), whose loading of undici is slowed by 0.8 s as on such a
    // machine; a window of 0.3 s (each attempt gets at least 0.5 s).
    const hook = await webhook(() => 200);
    const child = await spawnRegistry({
      REGISTRY_TOKENS: TOKENS_ENV,
      REGISTRY_FETCH_ALLOW: '127.0.0.1',
      REGISTRY_WEBHOOK_RETRY_SECONDS: '0.3',
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${slowUndiciLoad(800)}`.trim(),
    });
    try {
      const bob = await sdkClient(child.url, { token: TOKENS.bob });
      const task = await sendWithPush(bob, { filter: { tags: ['first-push'] } }, { url: hook.url, token: 't' });
      // The first thing pushed: the initial matches (before, the watch's FAILED status, its initial matches cut by the window).
      const first = await hook.waitFor(() => true, 'a first notification');
      assert.equal(first.artifactUpdate?.artifact?.name, 'watch-results', JSON.stringify(first).slice(0, 600));
      const current = (await bob.getTask({ tenant: '', id: task.id, historyLength: undefined })) as unknown as WireJson;
      assert.equal(current.status?.state, TaskState.TASK_STATE_WORKING, JSON.stringify(current.status));
      await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    } finally {
      await child.stop();
      await hook.close();
    }
  });
});
