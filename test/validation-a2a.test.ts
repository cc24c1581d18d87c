/**
 * The `validate` operation end to end over A2A: every file of test/fixtures/corpus is uploaded as a
 * file part (exactly its bytes) to a running registry, and the answer must match the verdict
 * table in test/fixtures/corpus-verdicts.json — the same table the in-process validator tests
 * use. Files larger than the request body limit never reach the executor: they get the
 * transport's own error, and the table must call them TOO_LARGE.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Client } from '@a2a-js/sdk/client';
import { dataPart, errorOf, filePart, resultOf, sdkClient, send, stateOf, type WireJson } from './support/client.js';
import { CORPUS_DIR, TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';
import { v1Card } from './support/documents.js';

interface Expected {
  verdict: 'accept' | 'reject';
  errorCode?: string;
  generation?: string;
  errors?: [string, string][];
  warnings?: string[];
}
interface Table {
  toolspecServerMeta: { name: string; url: string };
  cards: Record<string, Expected>;
  toolspecs: Record<string, Expected>;
}
const table = JSON.parse(fs.readFileSync(new URL('./fixtures/corpus-verdicts.json', import.meta.url), 'utf8')) as Table;

let registry: TestRegistry;
let client: Client;
before(async () => {
  registry = await startTestRegistry();
  client = await sdkClient(registry.url);
});
after(() => registry.close());

async function validateFile(kind: 'cards' | 'toolspecs', file: string): Promise<WireJson | 'body-too-large'> {
  const bytes = fs.readFileSync(path.join(CORPUS_DIR, kind, file));
  const parts =
    kind === 'cards'
      ? [filePart(bytes, 'agent-card.json'), dataPart({ validate: {} })]
      : [filePart(bytes, 'toolspec.json'), dataPart({ validate: { mcpServer: table.toolspecServerMeta } })];
  try {
    return await send(client, parts);
  } catch (err) {
    if (/limit is \d+ bytes/.test((err as Error).message)) return 'body-too-large';
    throw err;
  }
}

for (const kind of ['cards', 'toolspecs'] as const) {
  for (const [file, expected] of Object.entries(table[kind])) {
    test(`${kind}/${file}: ${expected.verdict}${expected.errorCode ? ` ${expected.errorCode}` : ''}`, async () => {
      const answer = await validateFile(kind, file);
      if (answer === 'body-too-large') {
        assert.equal(expected.errorCode, 'TOO_LARGE', 'only a document far over the limit is refused by the body limit');
        return;
      }
      if (expected.verdict === 'accept') {
        const result = resultOf(answer);
        assert.equal(answer.artifacts[0].name, 'validation');
        assert.equal(result.valid, true);
        if (expected.generation) assert.equal(result.protocolVersion, expected.generation);
        assert.deepEqual([...new Set(result.warnings.map((w: WireJson) => w.rule))].sort(), expected.warnings ?? []);
        return;
      }
      assert.equal(stateOf(answer), 'TASK_STATE_REJECTED');
      const error = errorOf(answer);
      assert.equal(error.code, expected.errorCode);
      // An oversized upload is refused before it is parsed, with the upload's own path.
      if (expected.errorCode === 'TOO_LARGE') return assert.match(error.message, /bytes; the limit is 10,240 bytes/);
      assert.deepEqual(
        (error.details ?? []).map((d: WireJson) => [d.path, d.rule ?? '']),
        expected.errors ?? [],
      );
    });
  }
}

test('an uploaded file over the limit that fits minified is told to minify, as the CLI tells it (not to shorten descriptions)', async () => {
  const card = v1Card('Pretty Agent', 'https://pretty.example.org/a2a');
  card.skills = Array.from({ length: 60 }, (_, i) => ({ id: `s${i}`, name: `Skill ${i}`, description: 'Does one thing.', tags: ['a', 'b'], examples: ['Do it'] }));
  const pretty = JSON.stringify(card, null, 2);
  const compact = Buffer.byteLength(JSON.stringify(card));
  assert.ok(Buffer.byteLength(pretty) > 10_240 && compact <= 10_240, `${Buffer.byteLength(pretty)} / ${compact}`);
  const error = errorOf(await send(client, [filePart(pretty, 'agent-card.json'), dataPart({ validate: {} })]));
  assert.equal(error.code, 'TOO_LARGE');
  assert.match(error.message, new RegExp(`Without whitespace it is ${compact.toLocaleString('en-US')} bytes: send it minified`));
  assert.equal(error.details[0].path, '/parts/0/raw');
  assert.match(error.details[0].hint, /remove the indentation, or send the document as a data part/);
  // A file that does not fit even minified keeps the advice to shorten it.
  card.description = 'x'.repeat(10_300);
  const over = errorOf(await send(client, [filePart(JSON.stringify(card), 'agent-card.json'), dataPart({ validate: {} })]));
  assert.match(over.message, /Shorten descriptions/);
});

test('validate stores nothing', async () => {
  const card = v1Card('Validate Only', 'https://validate-only.example.org/a2a');
  const answer = await send(client, [dataPart({ validate: { agentCard: card } })]);
  assert.equal(resultOf(answer).valid, true);
  const hits = resultOf(await send(client, [dataPart({ search: { query: 'Validate Only' } })])).results;
  assert.ok(!hits.some((h: WireJson) => h.name === 'Validate Only'));
});

test('a bare toolspec.json with {"validate": {}} is checked without server metadata', async () => {
  const toolspec = { tools: [{ name: 'ping', description: 'Pings.', inputSchema: { type: 'object' } }] };
  const answer = await send(client, [filePart(JSON.stringify(toolspec), 'toolspec.json'), dataPart({ validate: {} })]);
  const result = resultOf(answer);
  assert.equal(result.valid, true);
  assert.equal(result.kind, 'mcp-server');
});

test('over A2A, a tool parameter named with a bidirectional control is refused and its description checked as a text (the web audit\'s document)', async () => {
  const toolspec = {
    tools: [{ name: 'delete_file', description: 'Deletes a file', inputSchema: { type: 'object', properties: { 'confirm\u202eeurt\u202c': { type: 'string', description: '\u001b[31mred \u202eevil' } } } }],
  };
  const answer = await send(client, [dataPart({ validate: { mcpServer: { name: 'bidi mcp', url: 'https://bidi.acme-agents.net/mcp' }, toolspec } })]);
  assert.equal(stateOf(answer), 'TASK_STATE_REJECTED');
  const error = errorOf(answer);
  assert.equal(error.code, 'VALIDATION_FAILED');
  const param = '/toolspec/tools/0/inputSchema/properties/confirm\u202eeurt\u202c';
  assert.deepEqual(
    (error.details ?? []).map((d: WireJson) => [d.path, d.rule]),
    [
      [param, 'bidi-control'],
      [`${param}/description`, 'control-character'],
    ],
  );
});

/** A v1.0 message sent as raw JSON text (the SDK's clients would write 1e400 as null): its task, as wire JSON. */
async function sendRaw(binding: 'JSONRPC' | 'HTTP+JSON', parts: string): Promise<WireJson> {
  const message = `{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":${parts}}`;
  const [path, body] =
    binding === 'JSONRPC' ? ['/a2a/jsonrpc', `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":${message}}}`] : ['/a2a/rest/message:send', `{"message":${message}}`];
  const res = await fetch(`${registry.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.admin}` },
    body,
  });
  const answer = (await res.json()) as WireJson;
  return (binding === 'JSONRPC' ? answer.result : answer).task as WireJson;
}

/** A v1.0 card whose first extension's params are `params`, written as given. */
const cardWithParams = (name: string, params: string): string =>
  JSON.stringify(v1Card(name, `https://${name.toLowerCase().replace(/\W/g, '')}.acme-agents.net/a2a`)).replace(
    '"capabilities":{',
    `"capabilities":{"extensions":[{"uri":"https://ext.acme-agents.net/x","params":${params}}],`,
  );
const rawFile = (text: string, filename: string): string => `{"raw":"${Buffer.from(text).toString('base64')}","filename":"${filename}","mediaType":"application/json"}`;
const rawData = (data: string): string => `{"data":${data},"mediaType":"application/json"}`;

test('a number past a double\'s range (1e400) is refused at its path on JSON-RPC and HTTP+JSON, inline and uploaded, never stored as null', async () => {
  const params = '{"big":1e400,"neg":-1e400}';
  const paths = ['/capabilities/extensions/0/params/big', '/capabilities/extensions/0/params/neg'];
  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    const name = `Huge ${binding} Agent`;
    const card = cardWithParams(name, params);
    for (const [how, parts] of [
      ['data part', `[${rawData(`{"register":{"agentCard":${card}}}`)}]`],
      ['file part', `[${rawFile(card, 'agent-card.json')}]`],
    ] as const) {
      const task = await sendRaw(binding, parts);
      assert.equal(stateOf(task), 'TASK_STATE_REJECTED', `${binding} ${how}`);
      const error = errorOf(task);
      assert.equal(error.code, 'VALIDATION_FAILED');
      assert.deepEqual(error.details.map((d: WireJson) => [d.path, d.rule]), paths.map((p) => [p, 'number-out-of-range']), `${binding} ${how}`);
      // The file's text says how it was written; a data part was read with its request.
      const big = how === 'file part' ? '1e400' : 'this number';
      assert.equal(error.details[0].message, `${big} is beyond the largest number JSON here can hold (about 1.8e308): write a smaller number or a string`);
    }
    const hits = resultOf(await send(client, [dataPart({ search: { query: name } })])).results as WireJson[];
    assert.ok(!hits.some((h) => h.name === name), 'nothing stored');
  }
  // A tool schema's maximum, validated inline: the same clear message, not "must be a number, found a number".
  const toolspec = '{"tools":[{"name":"scale","description":"Scales.","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":1e400}}}}]}';
  for (const parts of [
    `[${rawData(`{"validate":{"mcpServer":{"name":"scale","url":"https://scale.acme-agents.net/mcp"},"toolspec":${toolspec}}}`)}]`,
    `[${rawFile(toolspec, 'toolspec.json')},${rawData('{"validate":{}}')}]`,
  ]) {
    const error = errorOf(await sendRaw('JSONRPC', parts));
    assert.deepEqual(error.details.map((d: WireJson) => [d.path, d.rule]), [['/toolspec/tools/0/inputSchema/properties/n/maximum', 'number-out-of-range']]);
    assert.match(error.message, /maximum: (1e400|this number) is beyond the largest number JSON here can hold/);
    assert.doesNotMatch(error.message, /found a number/);
  }
});

test('over gRPC, Infinity and NaN (which a protobuf Struct carries) are refused at their paths; an uploaded 1e400 as written', async () => {
  const grpcRegistry = await startTestRegistry({ GRPC_PORT: '0' });
  try {
    const grpc = await sdkClient(grpcRegistry.url, { binding: 'GRPC' });
    const card = v1Card('Grpc Huge Agent', 'https://grpchuge.acme-agents.net/a2a') as WireJson;
    card.capabilities.extensions = [{ uri: 'https://ext.acme-agents.net/x', params: { big: Infinity, nan: Number.NaN } }];
    const inline = errorOf(await send(grpc, [dataPart({ validate: { agentCard: card } })]));
    assert.deepEqual(inline.details.map((d: WireJson) => [d.path, d.message]), [
      ['/capabilities/extensions/0/params/big', 'this number is beyond the largest number JSON here can hold (about 1.8e308): write a smaller number or a string'],
      ['/capabilities/extensions/0/params/nan', 'NaN is not a number JSON can hold: write a number, or a string'],
    ]);
    const uploaded = errorOf(await send(grpc, [filePart(cardWithParams('Grpc Huge Agent', '{"big":1e400}'), 'agent-card.json'), dataPart({ validate: {} })]));
    assert.deepEqual(uploaded.details.map((d: WireJson) => [d.path, d.message.split(' is ')[0]]), [['/capabilities/extensions/0/params/big', '1e400']]);
  } finally {
    await grpcRegistry.close();
  }
});

test('an uploaded number with more digits than a double keeps is registered with a warning saying what card.json serves; inline, as read', async () => {
  const card = cardWithParams('Long Digits Agent', '{"id":12345678901234567890,"max":1e300}');
  const result = resultOf(await sendRaw('JSONRPC', `[${rawFile(card, 'agent-card.json')}]`));
  const rounded = (result.warnings as WireJson[]).filter((w) => w.rule === 'number-rounded');
  assert.deepEqual(rounded.map((w) => [w.path, w.message]), [
    ['/capabilities/extensions/0/params/id', '12345678901234567890 is read as 12345678901234567000: JSON numbers here are IEEE 754 doubles, exact to about 16 significant digits'],
  ]);
  // What README documents: the card is kept as JSON.parse reads it, and served so.
  const served = await (await fetch(`${registry.url}/agents/${result.id}/card.json`)).text();
  assert.match(served, /"params":\{"id":12345678901234567000,"max":1e\+300\}/);
  // A data part was read, and rounded, with its request: no warning can say so.
  const inline = resultOf(await sendRaw('JSONRPC', `[${rawData(`{"validate":{"agentCard":${card}}}`)}]`));
  assert.equal((inline.warnings as WireJson[]).filter((w) => w.rule === 'number-rounded').length, 0);
});

test('an uploaded document with a key given twice is refused at its path, naming where the other one is; a data part is read as JSON.parse reads it', async () => {
  const card = JSON.stringify(v1Card('Twice Named Agent', 'https://twicenamed.acme-agents.net/a2a'), null, 2).replace('{\n  "name"', '{\n  "name": "Once Named Agent",\n  "name"');
  const error = errorOf(await sendRaw('JSONRPC', `[${rawFile(card, 'agent-card.json')}]`));
  assert.equal(error.code, 'VALIDATION_FAILED');
  assert.deepEqual(error.details.map((d: WireJson) => [d.path, d.rule, d.message]), [
    ['/name', 'duplicate-key', '"name" is given twice in this object (also at line 2, column 3): a JSON reader keeps only one, and readers differ in which'],
  ]);
  // A second "tools" list in an uploaded toolspec: the same, at its path under /toolspec.
  const toolspec = '{"tools":[{"name":"a","description":"A.","inputSchema":{"type":"object"}}],"tools":[{"name":"b","description":"B.","inputSchema":{"type":"object"}}]}';
  const tools = errorOf(await sendRaw('JSONRPC', `[${rawFile(toolspec, 'toolspec.json')},${rawData('{"validate":{}}')}]`));
  assert.deepEqual(tools.details.map((d: WireJson) => [d.path, d.rule]), [['/toolspec/tools', 'duplicate-key']]);
  // Inline, the request body is JSON the HTTP layer read (RFC 8259 section 4: the last one kept), as README says.
  const inline = resultOf(await sendRaw('JSONRPC', `[${rawData(`{"validate":{"agentCard":${card}}}`)}]`));
  assert.equal(inline.valid, true);
});
