/** A watch's stream (or a resumed one) as the SDK client receives it, with waits for its events. */
import { spawn, type ChildProcess } from 'node:child_process';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { randomUUID } from 'node:crypto';
import { SendMessageConfiguration, Task, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { Ajv, type ValidateFunction } from 'ajv';
import { ClientFactory as ClientFactory03, ClientFactoryOptions as ClientFactoryOptions03, JsonRpcTransportFactory as JsonRpcTransportFactory03 } from 'a2a-sdk-03/client';
import type { Task as Task03 } from 'a2a-sdk-03';
import { authFetch, dataPart, message, streamEventJson, type WireJson } from './client.js';
import { BIN, ensureBuilt } from './built.js';
import type { HoldPoint } from './hold-point.js';
import { REPO_ROOT, TOKENS } from './registry.js';

/** How long a test waits for an event or a webhook request before it fails (see EventLog.waitFor). */
const EVENT_DEADLINE_MS = 15_000;

/** The events of one stream as they arrive, with a way to wait for one. */
export class EventLog {
  readonly events: WireJson[] = [];
  readonly done: Promise<void>;
  readonly #abort = new AbortController();
  #wake: (() => void) | undefined;

  constructor(open: (signal: AbortSignal) => AsyncIterable<StreamResponse>) {
    this.done = (async () => {
      try {
        for await (const event of open(this.#abort.signal)) {
          this.events.push(streamEventJson(event));
          this.#wake?.();
        }
      } catch (err) {
        if (!this.#abort.signal.aborted) throw err;
      } finally {
        this.#wake?.();
      }
    })();
    this.done.catch(() => undefined);
  }

  /**
   * The first event (from `from` on) that satisfies `test`, waiting up to `ms` for it. The
   * deadline only ends a failing test: a passing one never waits for it, so it is generous
   * enough for a machine whose cores other test files keep busy.
   */
  async waitFor(test: (event: WireJson) => boolean, what: string, ms = EVENT_DEADLINE_MS, from = 0): Promise<WireJson> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.events.slice(from).find(test);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms; got ${JSON.stringify(this.events.map(summary))}`);
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, 100);
      });
    }
  }

  /** Watch events (the data of each `watch-event` artifact update), in order. */
  get watchEvents(): WireJson[] {
    return this.events.filter((e) => e.artifactUpdate?.artifact?.name === 'watch-event').map((e) => dataOf(e.artifactUpdate.artifact));
  }

  async waitForEvent(test: (event: WireJson) => boolean, what: string): Promise<WireJson> {
    const found = await this.waitFor((e) => e.artifactUpdate?.artifact?.name === 'watch-event' && test(dataOf(e.artifactUpdate.artifact)), what);
    return dataOf(found.artifactUpdate.artifact);
  }

  disconnect(): void {
    this.#abort.abort();
  }
}

export const dataOf = (artifact: WireJson): WireJson => artifact.parts.find((p: WireJson) => p.data !== undefined).data;
const summary = (e: WireJson): string =>
  e.task ? `task:${e.task.status?.state}` : e.statusUpdate ? `status:${e.statusUpdate.status?.state}` : e.artifactUpdate ? `${e.artifactUpdate.artifact.name}:${JSON.stringify(dataOf(e.artifactUpdate.artifact)).slice(0, 80)}` : '?';

export function watch(client: Client, request: WireJson): EventLog {
  return new EventLog((signal) =>
    client.sendMessageStream({ tenant: '', message: message([dataPart({ watch: request })]), configuration: undefined, metadata: undefined }, { signal }),
  );
}

/**
 * SubscribeToTask on a watch's task, as a client resumes it: saying the last event it has
 * (`lastSeq`, sent as Last-Event-ID), or not saying (undefined).
 */
export function resume(client: Client, id: string, lastSeq?: number): EventLog {
  const serviceParameters = lastSeq === undefined ? undefined : { 'Last-Event-ID': String(lastSeq) };
  return new EventLog((signal) => client.resubscribeTask({ tenant: '', id }, { signal, serviceParameters }));
}

export interface Hook {
  url: string;
  /** What was sent, in order of arrival; `at` is when its body had arrived (Date.now()). */
  requests: Array<{ token: string | undefined; contentType: string | undefined; body: WireJson; at: number }>;
  waitFor(test: (body: WireJson) => boolean, what: string): Promise<WireJson>;
  close(): Promise<void>;
}

/** A webhook on 127.0.0.1 that records what it is sent and answers with `status()` (and `body` and `headers`, if given), after `delayMs`. */
export async function webhook(status: () => number, body?: string, delayMs = 0, headers: Record<string, string> = {}): Promise<Hook> {
  const requests: Hook['requests'] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      requests.push({ token: req.headers['x-a2a-notification-token'] as string | undefined, contentType: req.headers['content-type'], body: JSON.parse(text), at: Date.now() });
      const answer = () => res.writeHead(status(), headers).end(body);
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    requests,
    async waitFor(test, what) {
      const deadline = Date.now() + EVENT_DEADLINE_MS;
      for (;;) {
        const found = requests.find((r) => test(r.body));
        if (found) return found.body;
        if (Date.now() > deadline) throw new Error(`no ${what}; got ${JSON.stringify(requests.map((r) => r.body)).slice(0, 500)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The registry's fetcher keeps its connections alive: do not wait for them.
        server.closeAllConnections();
      }),
  };
}

export async function sendWithPush(client: Client, request: WireJson, push: { url: string; token: string }): Promise<WireJson> {
  const result = await client.sendMessage({
    tenant: '',
    message: message([dataPart({ watch: request })]),
    configuration: SendMessageConfiguration.fromJSON({ taskPushNotificationConfig: { url: push.url, token: push.token } }),
    metadata: undefined,
  });
  return Task.toJSON(result as Task) as WireJson;
}

/** `{"renew": {}}` on watch task `taskId`, as JSON-RPC SendMessage with `token`: the JSON-RPC answer (result or error). */
async function renewOverJsonRpc(registryUrl: string, token: string, taskId: string): Promise<WireJson> {
  const res = await fetch(`${registryUrl}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', taskId, parts: [dataPart({ renew: {} })] } } }),
  });
  return (await res.json()) as WireJson;
}

/**
 * A renewal of watch `taskId` on `registryUrl` racing a CancelTask: the renewal is sent, the
 * cancel runs once the renewal is held at `point` (the test patched where), and the renewal goes
 * on after the cancel answered. Resolves with both answers.
 */
export async function renewalHeldWhileCanceled(
  point: HoldPoint,
  registryUrl: string,
  token: string,
  taskId: string,
  cancel: () => Promise<Task>,
): Promise<{ renewal: WireJson; canceled: WireJson }> {
  const renewing = renewOverJsonRpc(registryUrl, token, taskId);
  try {
    await point.reached;
    const canceled = Task.toJSON(await cancel()) as WireJson;
    point.release();
    return { renewal: await renewing, canceled };
  } finally {
    point.release();
  }
}

/**
 * Starts a watch with a push config as a v0.3 client does: @a2a-js/sdk 0.3 (v0.3 JSON-RPC, no
 * A2A-Version header), from the registry's base URL, `message/send` with `pushNotificationConfig`.
 */
export async function sendWithPush03(registryUrl: string, token: string, request: WireJson, push: { url: string; token: string }): Promise<Task03> {
  const client = await new ClientFactory03(
    ClientFactoryOptions03.createFrom(ClientFactoryOptions03.default, { transports: [new JsonRpcTransportFactory03({ fetchImpl: authFetch(token) })] }),
  ).createFromUrl(registryUrl);
  const result = await client.sendMessage({
    message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'data', data: { watch: request } }] },
    configuration: { pushNotificationConfig: { url: push.url, token: push.token } },
  });
  if (result.kind !== 'task') throw new Error(`expected a task, got ${JSON.stringify(result).slice(0, 200)}`);
  return result;
}

/** The official A2A v0.3.0 JSON schema's Task (test/fixtures/reference), compiled when first used: most files importing this never do. */
let v03Task: ValidateFunction | undefined;

/**
 * Asserts that a v0.3 webhook's notification is what A2A v0.3 section 9.5 says it is, the Task
 * ("Task object is sent as JSON payload"): valid against the schema's Task, `kind: "task"`.
 */
export function assertV03Task(body: WireJson): void {
  v03Task ??= new Ajv({ strict: false })
    .addSchema(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'test/fixtures/reference/a2a-v0.3.0.schema.json'), 'utf8')), 'a2a-v0.3.0')
    .getSchema('a2a-v0.3.0#/definitions/Task')!;
  assert.ok(v03Task(body), `not a v0.3 Task: ${JSON.stringify(v03Task.errors)} in ${JSON.stringify(body).slice(0, 300)}`);
}

/** The data part of the one artifact a v0.3 webhook's Task carries (its event's), if it has exactly one. */
export function v03EventData(body: WireJson): WireJson | undefined {
  if (body.kind !== 'task' || body.artifacts?.length !== 1) return undefined;
  return body.artifacts[0].parts?.find((p: WireJson) => p.kind === 'data')?.data;
}

/**
 * `a2a-registry watch --json` for bob on `tag`, run as a user runs it (the built command, as
 * cli.test runs it: compiling src/ through tsx in every child cost more than a second each),
 * with its JSON lines as they come.
 */
export interface CliWatch {
  child: ChildProcess;
  lines: WireJson[];
  /** What it wrote to stderr so far. */
  stderr(): string;
  exited: Promise<unknown>;
  /** The first line that satisfies `test`, waiting up to `ms` for it. */
  waitLine(test: (line: WireJson) => boolean, what: string, ms: number): Promise<WireJson>;
}

export function cliWatch(registryUrl: string, tag: string, extraArgs: readonly string[] = []): CliWatch {
  ensureBuilt();
  const child = spawn(process.execPath, [BIN, 'watch', '--registry', registryUrl, '--token', TOKENS.bob, '--tag', tag, '--json', ...extraArgs], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: WireJson[] = [];
  let stderr = '';
  readline.createInterface({ input: child.stdout! }).on('line', (l) => lines.push(JSON.parse(l)));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const waitLine = async (test: (line: WireJson) => boolean, what: string, ms: number): Promise<WireJson> => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const found = lines.find(test);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no ${what}; stdout ${JSON.stringify(lines)}; stderr ${stderr}`);
  };
  return { child, lines, stderr: () => stderr, exited, waitLine };
}
