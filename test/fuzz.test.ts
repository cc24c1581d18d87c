/**
 * Property-based fuzzing (fast-check, fixed seed, bounded runs):
 * - in process: generated documents at the validator and generated messages at the request
 *   parser: never a throw other than a RegistryError, always a well-formed verdict, quickly;
 * - over HTTP against a running registry: generated requests (raw bytes, JSON values, broken
 *   and plausible JSON-RPC envelopes, messages with generated parts and operations, in both
 *   bindings, streaming or not, with and without tokens): the server never crashes or answers
 *   an internal error, every answer is a well-formed A2A answer, and a request that did not
 *   complete a registration or unregistration leaves the store exactly as it was.
 *
 *   node --import tsx --test test/fuzz.test.ts                     (default runs, part of npm test)
 *   FUZZ_RUNS=5000 node --import tsx --test test/fuzz.test.ts      (longer; FUZZ_SEED=n for another seed)
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { Message } from '@a2a-js/sdk';
import { RegistryError } from '../src/contract/errors.js';
import { parseRequest } from '../src/operations/request-parser.js';
import { MAX_FINDINGS, compactJsonBytes, createDocumentValidator, type Verdict } from '../src/validation/index.js';
import { mcpServer, toolspec, v03Card, v1Card } from './support/documents.js';
import type { WireJson } from './support/client.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';
import { assertNoInternals, assertWellFormedJsonRpcAnswer, prototypeSnapshot, rawPost, type RawAnswer } from './support/raw-http.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20260801);
const RUNS = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : undefined;
const IN_PROCESS_RUNS = RUNS ?? 1500;
const HTTP_RUNS = RUNS ?? 300;
/** Far above any honest validation; only a pathological input (a regex run, a compile) gets near it. */
const SLOW_MS = 2000;
const protoBefore = prototypeSnapshot();

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

const CARD_KEYS = [
  'name', 'description', 'version', 'supportedInterfaces', 'capabilities', 'defaultInputModes', 'defaultOutputModes', 'skills',
  'protocolVersion', 'url', 'preferredTransport', 'additionalInterfaces', 'securitySchemes', 'securityRequirements', 'signatures',
  'provider', 'documentationUrl', 'iconUrl', 'tags', 'id', 'examples', 'protocolBinding', 'tenant', 'streaming', 'transport',
];
const HOSTILE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '$ref', '$schema', 'pattern', ''];
const key = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...CARD_KEYS) }, { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_KEYS) }, { weight: 2, arbitrary: fc.string({ maxLength: 12 }) });

const leaf = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('https://agent.example.org/a2a', 'http://localhost', 'javascript:alert(1)', 'file:///etc/passwd', '1.0', '0.3', '0.3.0', '9.9',
    'JSONRPC', 'HTTP+JSON', 'GRPC', 'text/plain', 'application/json', '', ' ', '\u0000', '\ud800', 'x'.repeat(3000)),
);

/** JSON values, a few levels deep, with card-like and hostile keys. */
const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(key, tie('value'), { maxKeys: 5 })),
})).value.map(roundTrip);

/**
 * What JSON.parse makes of a value (own "__proto__" keys, ordinary prototypes, no undefined).
 * Only for shallow values: the deep ones below are made by JSON.parse already, and spreading
 * generated objects into a document keeps "__proto__" an own key too.
 */
function roundTrip<T>(value: T): T {
  const text = JSON.stringify(value);
  return text === undefined ? (null as T) : (JSON.parse(text) as T);
}

/** The JSON text of a deep value (JSON.stringify cannot write it back: it recurses). */
const DEEP_TEXT = Symbol('deep JSON text');

/** Arrays or objects nested `n` deep: past every recursion limit that is not guarded. */
const deep = fc.tuple(fc.integer({ min: 50, max: 5000 }), fc.boolean()).map(([n, arrays]) => {
  const text = arrays ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  const value = JSON.parse(text) as object;
  // Symbol keys are invisible to JSON and to the registry; they let the test print and serialise it.
  Object.defineProperty(value, DEEP_TEXT, { value: text });
  Object.defineProperty(value, fc.toStringMethod, { value: () => `<${n} levels of ${arrays ? 'arrays' : 'objects'}>` });
  return value as unknown;
});

/** JSON.stringify that writes deep generated values from their text instead of recursing into them. */
function stringify(value: unknown): string {
  const deepTexts: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'object' && v !== null && DEEP_TEXT in v) {
      deepTexts.push((v as { [DEEP_TEXT]: string })[DEEP_TEXT]);
      return `\u0000deep${deepTexts.length - 1}\u0000`;
    }
    return v;
  });
  return (text ?? 'null').replace(/"\\u0000deep(\d+)\\u0000"/g, (_m, i: string) => deepTexts[Number(i)]!);
}
// Deep values are rare per value: a document carries several, and one is enough to stop it at the body's depth check.
const anyValue = fc.oneof({ weight: 15, arbitrary: json }, { weight: 1, arbitrary: deep });

/** Often no edit at all, so that valid documents (and so real writes) are common too. */
const edits = fc.oneof({ weight: 2, arbitrary: fc.constant({}) }, { weight: 3, arbitrary: fc.dictionary(key, anyValue, { minKeys: 1, maxKeys: 3 }) });

/** A valid card (v1.0 or v0.3) with a few fields replaced, added or removed. */
const mutatedCard = fc
  .record({
    base: fc.constantFrom('v1', 'v03'),
    top: edits,
    skill: edits,
    iface: edits,
    drop: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.subarray(['name', 'description', 'skills', 'supportedInterfaces', 'capabilities', 'protocolVersion', 'url', 'version']) }),
    // undefined: the URL bob registered first (others may not take it over); else new URLs or junk.
    url: fc.oneof(fc.constant(undefined), fc.webUrl({ validSchemes: ['https'] }), fc.string({ maxLength: 30 })),
  })
  .map(({ base, top, skill, iface, drop, url }) => {
    const card: Record<string, unknown> = base === 'v1' ? v1Card('Fuzz Agent', url ?? 'https://fuzz.example.org/a2a') : v03Card('Fuzz Agent', url ?? 'https://fuzz.example.org/a2a');
    const skills = card.skills as Record<string, unknown>[];
    skills[0] = { ...skills[0], ...skill };
    if (Array.isArray(card.supportedInterfaces)) card.supportedInterfaces = [{ ...(card.supportedInterfaces as object[])[0], ...iface }];
    for (const k of drop) delete card[k];
    return { ...card, ...top };
  });

const PATTERNS = ['^(a+)+$', '(a|aa)+', '(.*a){20}', '(', '[', '\\', '(?<n>a)\\k<n>', '\\p{L}+', '^[\\w.-]{1,128}$', '(?=a)*', 'a{1,100000}'];
const REFS = ['#', '#/$defs/a', '#/definitions/missing', '#/properties/x', 'http://169.254.169.254/', 'https://example.com/s.json', 'file:///etc/passwd', '#/%ZZ', ''];
const DIALECTS = [undefined, 'http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2019-09/schema', 'http://json-schema.org/draft-04/schema#', 'nonsense'];

/** Schema-like objects: plausible keywords with hostile values (never compiled or run by the registry). */
const schema: fc.Arbitrary<unknown> = fc.letrec<{ s: unknown }>((tie) => ({
  s: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.boolean(),
    fc.record(
      {
        type: fc.oneof(fc.constantFrom('object', 'string', 'integer', 'array', 'null', 'nope'), fc.array(fc.constantFrom('string', 'null', 5), { maxLength: 3 })),
        properties: fc.dictionary(key, tie('s'), { maxKeys: 4 }),
        patternProperties: fc.dictionary(fc.constantFrom(...PATTERNS), tie('s'), { maxKeys: 2 }),
        items: tie('s'),
        anyOf: fc.array(tie('s'), { maxLength: 3 }),
        pattern: fc.oneof(fc.constantFrom(...PATTERNS), fc.string({ maxLength: 20 })),
        enum: fc.array(leaf, { maxLength: 30 }),
        $ref: fc.constantFrom(...REFS),
        $defs: fc.dictionary(fc.constantFrom('a', 'b', '__proto__'), tie('s'), { maxKeys: 2 }),
        required: fc.oneof(fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), fc.boolean()),
        default: json,
      },
      { requiredKeys: [] },
    ),
  ),
})).s.map(roundTrip);

const mutatedToolspec = fc
  .record({
    tools: fc.array(
      fc.record(
        {
          name: fc.oneof(fc.constantFrom('read_file', 'a'.repeat(200), 'bad name!', ''), fc.string({ maxLength: 20 })),
          description: fc.string({ maxLength: 60 }),
          inputSchema: fc.tuple(schema, fc.constantFrom(...DIALECTS)).map(([s, dialect]) =>
            typeof s === 'object' && s !== null ? { type: 'object', ...s, ...(dialect ? { $schema: dialect } : {}) } : s,
          ),
          outputSchema: schema,
          annotations: fc.dictionary(fc.constantFrom('readOnlyHint', 'destructiveHint', 'title', 'idempotentHint', '__proto__'), leaf, { maxKeys: 3 }),
        },
        { requiredKeys: ['name'] },
      ),
      { maxLength: 3 },
    ),
    extra: edits,
  })
  .map(({ tools, extra }) => ({ ...toolspec(), ...extra, tools: roundTrip([...toolspec().tools, ...tools]) }));

const mutatedServer = fc.tuple(edits, fc.oneof(fc.webUrl(), fc.string({ maxLength: 20 }))).map(([extra, url]) => ({ ...mcpServer('fuzz', url), ...extra }));

// ---------------------------------------------------------------------------------------------
// In process: the validator and the request parser
// ---------------------------------------------------------------------------------------------

function assertWellFormedVerdict(verdict: Verdict, kind: string): void {
  assert.equal(typeof verdict.valid, 'boolean');
  assert.equal(verdict.kind, kind);
  assert.ok(Array.isArray(verdict.errors) && Array.isArray(verdict.warnings), 'Array.isArray(verdict.errors) && Array.isArray(verdict.warnings)');
  assert.ok(verdict.errors.length <= MAX_FINDINGS && verdict.warnings.length <= MAX_FINDINGS, 'verdict.errors.length <= MAX_FINDINGS && verdict.warnings.length <= MAX_FINDINGS');
  if (verdict.valid) {
    assert.equal(verdict.errors.length, 0);
    assert.equal(verdict.errorCode, undefined);
  } else {
    assert.ok(['VALIDATION_FAILED', 'TOO_LARGE', 'UNSUPPORTED_VERSION'].includes(verdict.errorCode!), String(verdict.errorCode));
    assert.equal(typeof verdict.message, 'string');
    assert.ok(verdict.errors.length >= 1, 'verdict.errors.length >= 1');
  }
  for (const finding of [...verdict.errors, ...verdict.warnings]) {
    assert.equal(typeof finding.path, 'string');
    assert.ok(finding.path === '' || finding.path.startsWith('/'), finding.path);
    assert.equal(typeof finding.message, 'string');
  }
  // The verdict becomes an answer: it must serialise.
  assert.equal(typeof JSON.stringify(verdict), 'string');
}

function timed<T>(fn: () => T): T {
  const started = performance.now();
  const value = fn();
  const ms = performance.now() - started;
  assert.ok(ms < SLOW_MS, `took ${ms.toFixed(0)} ms`);
  return value;
}

describe('fuzz: in process', () => {
  const validator = createDocumentValidator({ maxDocumentBytes: 10_240 });
  // A process loads its all-errors validators when it first explains a failure (or compiles them,
  // a few hundred ms, without a build: src/validation/ajv-instances.ts); do it before the timed
  // runs, which are about inputs.
  validator.validateAgentCard({ name: 1 }, 10); // no version: explained as v1.0 and as v0.3
  validator.validateMcpServer({ name: 1 }, { tools: [{ inputSchema: { type: 'nope' } }] }, 10);

  test('agent cards: a well-formed verdict, quickly, for any document', () => {
    fc.assert(
      fc.property(fc.oneof({ weight: 4, arbitrary: mutatedCard }, { weight: 1, arbitrary: anyValue }), (card) => {
        const verdict = timed(() => validator.validateAgentCard(card, compactJsonBytes(card)));
        assertWellFormedVerdict(verdict, 'agent');
        assert.equal(prototypeSnapshot(), protoBefore);
      }),
      { seed: SEED, numRuns: IN_PROCESS_RUNS },
    );
  });

  test('MCP servers: a well-formed verdict, quickly, for any metadata and toolspec', () => {
    fc.assert(
      fc.property(fc.oneof({ weight: 4, arbitrary: mutatedServer }, { weight: 1, arbitrary: anyValue }), fc.oneof({ weight: 4, arbitrary: mutatedToolspec }, { weight: 1, arbitrary: anyValue }), (server, spec) => {
        const verdict = timed(() => validator.validateMcpServer(server, spec, compactJsonBytes(spec)));
        assertWellFormedVerdict(verdict, 'mcp-server');
        assert.equal(prototypeSnapshot(), protoBefore);
      }),
      { seed: SEED, numRuns: IN_PROCESS_RUNS },
    );
  });

  test('the request parser: an operation, or a RegistryError, for any message', () => {
    fc.assert(
      fc.property(fc.array(part(), { maxLength: 4 }), (parts) => {
        let message: Message;
        try {
          message = Message.fromJSON({ messageId: 'm', role: 'ROLE_USER', parts });
        } catch {
          return; // the SDK refuses it before the parser would see it (the shape guard answers -32602)
        }
        try {
          const operation = timed(() => parseRequest(message, { maxDocumentBytes: 10_240, maxJsonDepth: 100 }));
          assert.ok(['register', 'validate', 'search', 'get', 'list', 'unregister', 'refresh'].includes(operation.op), `${operation.op} is an operation of the contract`);
        } catch (err) {
          assert.ok(err instanceof RegistryError, `threw ${(err as Error)?.stack ?? String(err)}`);
          assert.equal(typeof JSON.stringify(err.toBody()), 'string');
        }
        assert.equal(prototypeSnapshot(), protoBefore);
      }),
      { seed: SEED, numRuns: IN_PROCESS_RUNS },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Over HTTP
// ---------------------------------------------------------------------------------------------

let registry: TestRegistry;
let bobsId = '';

/** An operation data part's object: the six operations with generated arguments, or anything. */
const operationData = () =>
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ register: fc.record({ agentCard: mutatedCard }) }) },
    { weight: 2, arbitrary: fc.record({ validate: fc.record({ agentCard: mutatedCard }) }) },
    { weight: 2, arbitrary: fc.record({ register: fc.record({ mcpServer: mutatedServer, toolspec: mutatedToolspec }, { requiredKeys: [] }) }) },
    { weight: 1, arbitrary: fc.record({ validate: fc.record({ mcpServer: mutatedServer, toolspec: mutatedToolspec }, { requiredKeys: [] }) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        search: fc.record(
          {
            query: fc.oneof(fc.string({ maxLength: 100 }), fc.constantFrom('invoice', 'weather', '*', '"', '__proto__', 'a '.repeat(400))),
            filter: fc.dictionary(fc.constantFrom('kind', 'tags', 'inputModes', 'readOnly', 'owner', 'protocolBinding', '__proto__', 'x'), json, { maxKeys: 3 }),
            limit: fc.oneof(fc.integer({ min: -5, max: 200 }), json),
            pageToken: fc.oneof(fc.string({ maxLength: 60 }), fc.base64String({ maxLength: 60 })),
          },
          { requiredKeys: [] },
        ),
      }),
    },
    { weight: 1, arbitrary: fc.record({ get: fc.record({ id: fc.oneof(fc.string(), fc.constant(bobsId)), revision: fc.oneof(fc.integer(), json) }, { requiredKeys: [] }) }) },
    { weight: 1, arbitrary: fc.record({ list: fc.record({ filter: json, pageSize: fc.oneof(fc.integer(), json), pageToken: fc.string() }, { requiredKeys: [] }) }) },
    { weight: 2, arbitrary: fc.record({ unregister: fc.record({ id: fc.oneof(fc.string(), fc.constant(bobsId), json) }) }) },
    { weight: 1, arbitrary: fc.dictionary(key, json, { maxKeys: 3 }) },
    { weight: 1, arbitrary: json },
  );

const base64Of = (value: unknown) => Buffer.from(typeof value === 'string' ? value : stringify(value)).toString('base64');

/** A wire-JSON part of a v1.0 message. */
function part(): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.record({ text: fc.string({ maxLength: 200 }) }) },
    { weight: 5, arbitrary: fc.record({ data: operationData(), mediaType: fc.constantFrom('application/json', 'text/plain', '') }) },
    {
      weight: 2,
      arbitrary: fc.record({
        raw: fc.oneof(
          fc.oneof(mutatedCard, mutatedToolspec, anyValue).map(base64Of),
          fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString('base64')),
          fc.string({ maxLength: 30 }),
        ),
        filename: fc.constantFrom('agent-card.json', 'toolspec.json', 'agent.json', 'x.bin', ''),
        mediaType: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/x-evil', ''),
      }),
    },
    { weight: 1, arbitrary: fc.record({ url: fc.oneof(fc.webUrl(), fc.string()) }) },
    { weight: 1, arbitrary: json },
  );
}

const METHODS = ['SendMessage', 'SendStreamingMessage', 'GetTask', 'ListTasks', 'CancelTask', 'SubscribeToTask', 'GetExtendedAgentCard', 'message/send', 'tasks/get'];

const message = () =>
  fc.record(
    {
      messageId: fc.oneof({ weight: 5, arbitrary: fc.uuid() }, { weight: 1, arbitrary: json }),
      role: fc.constantFrom('ROLE_USER', 'ROLE_AGENT', 'user', 'x'),
      parts: fc.oneof({ weight: 8, arbitrary: fc.array(part(), { maxLength: 3 }) }, { weight: 1, arbitrary: json }),
      metadata: json,
    },
    { requiredKeys: ['messageId', 'role', 'parts'] },
  );

interface FuzzRequest {
  binding: 'jsonrpc' | 'rest';
  body: string | Uint8Array;
  /** The JSON-RPC method, when the body has one. */
  method?: unknown;
  headers: Record<string, string>;
}

const headers = fc.record({
  token: fc.constantFrom<string | undefined>(undefined, TOKENS.alice, TOKENS.alice, TOKENS.bob, 'not-a-token-at-all-xx'),
  version: fc.oneof({ weight: 12, arbitrary: fc.constant('1.0') }, { weight: 1, arbitrary: fc.constantFrom<string | undefined>(undefined, '0.3', '2.0') }),
});

/** A message the SDK accepts: what varies is the parts (and so the operation). */
const plausibleMessage = () => fc.record({ messageId: fc.uuid(), role: fc.constant('ROLE_USER'), parts: fc.array(part(), { minLength: 1, maxLength: 3 }) });

const request = (): fc.Arbitrary<FuzzRequest> => {
  const envelope = fc.record(
    {
      jsonrpc: fc.oneof({ weight: 9, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: json }),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), json),
      method: fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...METHODS) }, { weight: 1, arbitrary: fc.oneof(fc.string(), json) }),
      params: fc.oneof(
        { weight: 8, arbitrary: fc.record({ message: message() }) },
        { weight: 1, arbitrary: fc.record({ id: fc.oneof(fc.string(), json) }) },
        { weight: 1, arbitrary: json },
      ),
    },
    { requiredKeys: [] },
  );
  const plausible = fc.record({
    jsonrpc: fc.constant('2.0'),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 })),
    method: fc.oneof({ weight: 3, arbitrary: fc.constant('SendMessage') }, { weight: 1, arbitrary: fc.constant('SendStreamingMessage') }),
    params: fc.record({ message: plausibleMessage() }),
  });
  const jsonRpc = fc.tuple(fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 1, arbitrary: envelope }), headers).map(
    ([env, h]): FuzzRequest => ({ binding: 'jsonrpc', body: stringify(env), method: (env as { method?: unknown }).method, headers: headerMap(h) }),
  );
  const garbage = fc
    .tuple(
      fc.oneof(
        fc.string({ maxLength: 200 }),
        fc.uint8Array({ maxLength: 200 }),
        json.map((v) => stringify(v)),
        fc.tuple(envelope, fc.nat()).map(([env, cut]) => {
          const text = stringify(env);
          return text.slice(0, cut % (text.length + 1));
        }),
      ),
      headers,
    )
    .map(([body, h]): FuzzRequest => ({ binding: 'jsonrpc', body, headers: headerMap(h) }));
  const rest = fc
    .tuple(fc.oneof({ weight: 3, arbitrary: fc.record({ message: plausibleMessage() }) }, { weight: 1, arbitrary: fc.record({ message: message() }) }, { weight: 1, arbitrary: json }), headers)
    .map(([body, h]): FuzzRequest => ({ binding: 'rest', body: stringify(body), headers: headerMap(h) }));
  return fc.oneof({ weight: 7, arbitrary: jsonRpc }, { weight: 1, arbitrary: garbage }, { weight: 2, arbitrary: rest });
};

function headerMap(h: { token?: string; version?: string }): Record<string, string> {
  const out: Record<string, string> = { 'A2A-Version': h.version ?? '' };
  if (h.token) out.authorization = `Bearer ${h.token}`;
  return out;
}

/** Everything about the store a rejected request must not change. */
async function storeState(): Promise<string> {
  const [seq, count, page] = await Promise.all([registry.store.lastChangeSeq(), registry.store.count(), registry.store.list({ limit: 100 })]);
  return JSON.stringify({ seq, count, entries: page.entries.map((e) => [e.id, e.owner, e.revision, e.contentHash]) });
}

/** A completed registration or unregistration: the only answers allowed to change the store. */
const completedWrite = (answer: RawAnswer): boolean =>
  /"name":"(registration|unregistration)"/.test(answer.text) && /TASK_STATE_COMPLETED|"state":"completed"/.test(answer.text);

/** A short name for what an answer was, for the run's tally. */
function outcomeOf(answer: RawAnswer): string {
  const last = answer.events?.at(-1) ?? answer.json;
  if (!last) return `HTTP ${answer.status}`;
  if (last.error?.code !== undefined) return `error ${last.error.code}`;
  const state = last.result?.task?.status?.state ?? last.result?.statusUpdate?.status?.state ?? last.task?.status?.state ?? last.result?.status?.state;
  if (state) {
    const code = /"code":"([A-Z_]+)"/.exec(answer.text)?.[1];
    return `task ${state}${code ? ` ${code}` : ''}`;
  }
  return `HTTP ${answer.status} other`;
}

function assertWellFormedRest(answer: RawAnswer, context: string): void {
  assert.ok(answer.json, `not JSON ${context}: ${answer.text.slice(0, 200)}`);
  if (answer.status === 200) {
    const task = answer.json.task;
    assert.ok(task?.status?.state, `no task ${context}: ${answer.text.slice(0, 200)}`);
  } else {
    assert.ok(answer.status >= 400 && answer.status < 500, `HTTP ${answer.status} ${context}: ${answer.text.slice(0, 200)}`);
    assert.equal(typeof answer.json.error?.message, 'string');
    assert.equal(typeof answer.json.error?.status, 'string');
  }
}

describe('fuzz: over HTTP', () => {
  before(async () => {
    registry = await startTestRegistry({ REGISTRY_RATE_LIMITS: 'false' });
    // An entry owned by bob, which generated requests try to update and delete with other tokens.
    const answer = await rawPost(
      `${registry.url}/a2a/jsonrpc`,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: { register: { agentCard: v1Card('Bob Agent', 'https://fuzz.example.org/a2a') } }, mediaType: 'application/json' }] } } }),
      { headers: { authorization: `Bearer ${TOKENS.bob}` } },
    );
    bobsId = answer.json!.result.task.artifacts[0].parts[0].data.id;
  });
  after(() => registry.close());

  test('every answer is well-formed, nothing internal leaks, and rejected requests change nothing', async (t) => {
    let completedWrites = 0;
    const tally = new Map<string, number>();
    const count = (what: string) => tally.set(what, (tally.get(what) ?? 0) + 1);
    await fc.assert(
      fc.asyncProperty(request(), async (req) => {
        const before = await storeState();
        const url = req.binding === 'jsonrpc' ? `${registry.url}/a2a/jsonrpc` : `${registry.url}/a2a/rest/message:send`;
        const answer = await rawPost(url, req.body, { headers: req.headers });
        const context = `(${req.binding} ${typeof req.method === 'string' ? req.method.slice(0, 40) : typeof req.method} -> HTTP ${answer.status})`;
        assertNoInternals(answer.text, context);
        assert.notEqual(answer.status, 500, `an internal error ${context}: ${answer.text.slice(0, 300)}`);
        if (req.binding === 'jsonrpc') {
          assertWellFormedJsonRpcAnswer(answer, req.method, context);
          const errors = [answer.json, ...(answer.events ?? [])].filter((e) => e?.error);
          assert.ok(!errors.some((e) => e!.error.code === -32603), `an internal error ${context}: ${answer.text.slice(0, 300)}`);
        } else {
          assertWellFormedRest(answer, context);
        }
        count(outcomeOf(answer));
        if (completedWrite(answer)) completedWrites++;
        else assert.equal(await storeState(), before, `the store changed on ${context}: ${answer.text.slice(0, 300)}`);
        assert.equal(prototypeSnapshot(), protoBefore);
        // bob's entry stays bob's, whoever asked.
        const bobs = await registry.store.get(bobsId);
        if (bobs) assert.equal(bobs.owner, 'bob');
      }),
      { seed: SEED, numRuns: HTTP_RUNS },
    );
    // Everything stored can be read back through the protocol (nothing stored that breaks answers).
    for (const entry of (await registry.store.list({ limit: 100 })).entries) {
      const answer = await rawPost(
        `${registry.url}/a2a/jsonrpc`,
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: { get: { id: entry.id } }, mediaType: 'application/json' }] } } }),
      );
      assert.equal((answer.json as WireJson).result?.task?.status?.state, 'TASK_STATE_COMPLETED', answer.text.slice(0, 300));
    }
    assert.equal((await fetch(`${registry.url}/healthz`)).status, 200);
    t.diagnostic(`outcomes: ${[...tally].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ')}; completed writes ${completedWrites}`);
    // The generators must reach the executor, not only the guards in front of it.
    assert.ok([...tally].filter(([k]) => k.startsWith('task ')).reduce((sum, [, v]) => sum + v, 0) >= HTTP_RUNS / 4, '[...tally].filter(([k]) => k.startsWith(\'task \')).reduce((sum, [, v]) => sum + v, 0) >= HTTP_RUNS / 4');
  });
});
