/**
 * The `validate` operation end to end over A2A: every file of test/fixtures/corpus is uploaded as a
 * file part (exactly its bytes) to a running registry, and the answer must match the verdict
 * table in test/fixtures/corpus-verdicts.json — the same table the in-process validator tests
 * use. Files larger than the request body limit never reach the executor: they get the
 * transport's own error, and the table must call them TOO_LARGE.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Client } from '@a2a-js/sdk/client';
import { dataPart, errorOf, filePart, resultOf, sdkClient, send, stateOf, type WireJson } from './support/client.js';
import { CORPUS_DIR, startTestRegistry, type TestRegistry } from './support/registry.js';
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
