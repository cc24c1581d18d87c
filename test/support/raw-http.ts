/**
 * Raw HTTP for hardening and fuzz tests: send any bytes to the registry (not only what the SDK
 * client would produce), read the answer as it came, and check that it is a well-formed A2A
 * answer: a JSON-RPC envelope (a result or an error object), or SSE events that are each one.
 */
import assert from 'node:assert/strict';
import type { WireJson } from './client.js';

export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body (JSON answers), or the parsed `data:` lines (SSE answers). */
  json?: WireJson;
  events?: WireJson[];
}

export interface RawOptions {
  headers?: Record<string, string>;
  method?: string;
  signal?: AbortSignal;
}

/** POSTs a body (any string or bytes) and reads the whole answer. */
export async function rawPost(url: string, body: string | Uint8Array, options: RawOptions = {}): Promise<RawAnswer> {
  const res = await fetch(url, {
    method: options.method ?? 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...options.headers },
    body: body as BodyInit,
    signal: options.signal ?? AbortSignal.timeout(30_000),
  });
  return readAnswer(res);
}

export async function readAnswer(res: Response): Promise<RawAnswer> {
  const text = await res.text();
  const answer: RawAnswer = { status: res.status, headers: res.headers, text };
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('text/event-stream')) answer.events = parseSse(text);
  else if (type.includes('json')) answer.json = JSON.parse(text) as WireJson;
  return answer;
}

/**
 * The JSON-RPC error response a v0.3 streaming method (message/stream, tasks/resubscribe) is
 * refused with, after checking it comes as v0.3 defines that method's answer: HTTP 200,
 * text/event-stream, one `event: error` frame holding the response (v0.3 3.3.1, 7.2.1).
 */
export function legacyStreamRefusal(answer: RawAnswer, context = ''): WireJson {
  assert.equal(answer.status, 200, `${context}: ${answer.text.slice(0, 300)}`);
  assert.match(answer.headers.get('content-type') ?? '', /^text\/event-stream/, `${context}: ${answer.text.slice(0, 300)}`);
  const frame = /^event: error\ndata: (.*)\n\n$/s.exec(answer.text);
  assert.ok(frame, `${context}: one event: error frame, got ${answer.text.slice(0, 300)}`);
  return JSON.parse(frame[1]!) as WireJson;
}

/** `data:` payloads of an SSE body, parsed (an `event: error` frame is parsed like the others). */
export function parseSse(text: string): WireJson[] {
  return text
    .split('\n\n')
    .map((frame) => frame.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'))
    .filter((data) => data.length > 0)
    .map((data) => JSON.parse(data) as WireJson);
}

export const TERMINAL_STATES = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);

/** A JSON-RPC 2.0 response: exactly one of result and error; an error has an integer code and a message. */
export function assertJsonRpcEnvelope(body: unknown, context = ''): asserts body is WireJson {
  assert.ok(body && typeof body === 'object' && !Array.isArray(body), `not a JSON object ${context}`);
  const env = body as WireJson;
  assert.equal(env.jsonrpc, '2.0', `jsonrpc is not "2.0" ${context}`);
  assert.ok('id' in env, `no id ${context}`);
  assert.ok(('result' in env) !== ('error' in env), `needs exactly one of result and error ${context}`);
  if ('error' in env) {
    assert.ok(Number.isInteger(env.error?.code), `error.code is not an integer ${context}`);
    assert.equal(typeof env.error.message, 'string', `error.message is not a string ${context}`);
  }
}

/**
 * A well-formed answer to a JSON-RPC request: a JSON-RPC error, or a result; for SendMessage the
 * result holds a task in a terminal state; an SSE answer is a sequence of envelopes whose last
 * one is an error or ends the task in a terminal state.
 */
export function assertWellFormedJsonRpcAnswer(answer: RawAnswer, method: unknown, context = ''): void {
  const ctx = `${context} (HTTP ${answer.status}: ${answer.text.slice(0, 300)})`;
  if (answer.events) {
    assert.ok(answer.events.length > 0, `an empty stream ${ctx}`);
    for (const event of answer.events) assertJsonRpcEnvelope(event, ctx);
    const last = answer.events.at(-1)!;
    if (!last.error) {
      const state = last.result?.statusUpdate?.status?.state ?? last.result?.task?.status?.state;
      assert.ok(TERMINAL_STATES.has(state), `the stream ends in state ${state} ${ctx}`);
    }
    return;
  }
  assert.ok(answer.json, `not JSON ${ctx}`);
  assertJsonRpcEnvelope(answer.json, ctx);
  if (answer.json.result !== undefined && (method === 'SendMessage' || method === 'message/send')) {
    const task = method === 'SendMessage' ? answer.json.result.task : answer.json.result;
    const state: string = method === 'SendMessage' ? task?.status?.state : task?.status?.state;
    if (method === 'SendMessage') assert.ok(TERMINAL_STATES.has(state), `task state ${state} is not terminal ${ctx}`);
    else assert.ok(['completed', 'failed', 'canceled', 'rejected'].includes(state), `v0.3 task state ${state} ${ctx}`);
  }
}

/** No stack frames, file paths or module names in what a caller sees. */
export function assertNoInternals(text: string, context = ''): void {
  assert.doesNotMatch(text, /\n\s+at [^\n]+:\d+:\d+/, `a stack trace ${context}: ${text.slice(0, 300)}`);
  assert.doesNotMatch(text, /\bat (?:async )?[\w.<>]+ \((?:file:\/\/|\/)[^)]*\)/, `a stack frame ${context}: ${text.slice(0, 300)}`);
  // (file:// URLs are not on the list: documents may legitimately carry them and answers quote them.)
  for (const needle of ['/work/', 'node_modules', '.ts:', '.js:']) {
    assert.ok(!text.includes(needle), `"${needle}" in an answer ${context}: ${text.slice(0, 300)}`);
  }
}

/** A JSON-RPC SendMessage body with the given wire-JSON parts. */
export function sendMessageBody(parts: unknown[], id: string | number = 1, method = 'SendMessage'): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts } } });
}

/** Own property names of Object.prototype and friends: compared before and after hostile input. */
export function prototypeSnapshot(): string {
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype]
    .map((p) => Object.getOwnPropertyNames(p).sort().join(','))
    .join('|');
}
