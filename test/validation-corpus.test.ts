/**
 * Every real document of test/fixtures/corpus against the expected verdicts in
 * test/fixtures/corpus-verdicts.json, plus the official A2A v0.3.0 JSON Schema as an
 * independent check of every card detected as v0.3.
 *
 * The corpus and the official schema are vendored in test/fixtures (sources: SOURCES.md).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { createDocumentValidator, type Verdict } from '../src/validation/index.js';

const corpus = new URL('./fixtures/corpus/', import.meta.url);
const reference = new URL('./fixtures/reference/', import.meta.url);

type Pair = [string, string];
interface Expected {
  why: string;
  verdict: 'accept' | 'reject';
  errorCode?: string;
  generation?: string;
  errors?: Pair[];
  warnings?: string[];
  officialV03?: 'accept' | 'reject';
  officialV03Disagreement?: string;
  withoutSizeLimit?: Omit<Expected, 'why' | 'withoutSizeLimit'>;
}
interface Table {
  sizeLimitBytes: number;
  toolspecServerMeta: { name: string; url: string };
  cards: Record<string, Expected>;
  toolspecs: Record<string, Expected>;
}

const table = JSON.parse(readFileSync(new URL('./fixtures/corpus-verdicts.json', import.meta.url), 'utf8')) as Table;
const validator = createDocumentValidator({ maxDocumentBytes: table.sizeLimitBytes });
const unlimited = createDocumentValidator({ maxDocumentBytes: Number.MAX_SAFE_INTEGER });

// The independent check: the official schema, untouched, compiled the way its authors meant it
// (draft-07, #/definitions/AgentCard). Not our schema file, not our code.
const officialSchema: unknown = JSON.parse(readFileSync(new URL('a2a-v0.3.0.schema.json', reference), 'utf8'));
const officialAjv = new Ajv({ strict: false });
officialAjv.addSchema(officialSchema as object, 'a2a-v0.3.0');
const officialAgentCard = officialAjv.getSchema('a2a-v0.3.0#/definitions/AgentCard');
assert.ok(officialAgentCard, 'official schema has #/definitions/AgentCard');

function files(kind: 'cards' | 'toolspecs'): string[] {
  return readdirSync(new URL(`${kind}/`, corpus))
    .filter((f) => f.endsWith('.json'))
    .sort();
}

function summary(v: Verdict): Omit<Expected, 'why' | 'officialV03' | 'officialV03Disagreement' | 'withoutSizeLimit'> {
  const s: ReturnType<typeof summary> = { verdict: v.valid ? 'accept' : 'reject' };
  if (v.errorCode) s.errorCode = v.errorCode;
  if (v.generation) s.generation = v.generation;
  if (v.errors.length) s.errors = v.errors.map((e): Pair => [e.path, e.rule ?? '']);
  const warnings = [...new Set(v.warnings.map((w) => w.rule ?? ''))].sort();
  if (warnings.length) s.warnings = warnings;
  return s;
}

function expectedSummary(e: Expected): ReturnType<typeof summary> {
  const { why: _why, officialV03: _o, officialV03Disagreement: _d, withoutSizeLimit: _w, ...rest } = e;
  return rest;
}

/** Real documents' findings each say how to fix them, not only what is wrong. */
function assertEveryFindingHinted(v: Verdict, file: string): void {
  for (const f of [...v.errors, ...v.warnings]) assert.ok(f.hint, `${file}: ${f.path} (${f.rule}) "${f.message}" has no hint`);
}

function read(kind: 'cards' | 'toolspecs', file: string): { doc: unknown; bytes: number } {
  const buf = readFileSync(new URL(`${kind}/${file}`, corpus));
  return { doc: JSON.parse(buf.toString('utf8')), bytes: buf.length };
}

test('the table covers exactly the corpus files', () => {
  assert.deepEqual(Object.keys(table.cards).sort(), files('cards'));
  assert.deepEqual(Object.keys(table.toolspecs).sort(), files('toolspecs'));
  for (const [file, e] of [...Object.entries(table.cards), ...Object.entries(table.toolspecs)]) {
    assert.ok(e.why.length > 20, `${file}: the table says why`);
    assert.equal(e.verdict === 'reject', e.errorCode !== undefined, `${file}: errorCode iff reject`);
  }
});

for (const file of files('cards')) {
  test(`card ${file}`, () => {
    const expected = table.cards[file];
    assert.ok(expected, `${file} is in the table`);
    const { doc, bytes } = read('cards', file);
    const verdict = validator.validateAgentCard(doc, bytes);
    assert.deepEqual(summary(verdict), expectedSummary(expected));
    assert.equal(verdict.sizeBytes, bytes);
    if (!verdict.valid) {
      assert.ok(verdict.message && !verdict.message.includes('\n'), 'one-line message');
      for (const e of verdict.errors) assert.ok(e.path === '' || e.path.startsWith('/'), `JSON Pointer: ${e.path}`);
    }
    assertEveryFindingHinted(verdict, file);

    // Independent check with the official v0.3 schema.
    const official = officialAgentCard(doc) ? 'accept' : 'reject';
    assert.equal(official, expected.officialV03, 'officialV03 in the table is what the official schema says');
    if (verdict.generation === '0.3' && verdict.errorCode !== 'TOO_LARGE') {
      if (official !== summary(verdict).verdict) {
        assert.ok(expected.officialV03Disagreement, `${file}: disagrees with the official v0.3 schema without an explanation`);
      }
    }
    // Never silently stricter than the official schema: every card it accepts and we reject
    // carries a documented reason.
    if (official === 'accept' && !verdict.valid) {
      assert.ok(expected.officialV03Disagreement, `${file}: official v0.3 schema accepts it; the table must say why we do not`);
    }
  });
}

for (const file of files('toolspecs')) {
  test(`toolspec ${file}`, () => {
    const expected = table.toolspecs[file];
    assert.ok(expected, `${file} is in the table`);
    const { doc, bytes } = read('toolspecs', file);
    const verdict = validator.validateMcpServer(table.toolspecServerMeta, doc, bytes);
    assert.deepEqual(summary(verdict), expectedSummary(expected));
    assertEveryFindingHinted(verdict, file);
    if (expected.withoutSizeLimit) {
      const whole = unlimited.validateMcpServer(table.toolspecServerMeta, doc, bytes);
      assert.deepEqual(summary(whole), expected.withoutSizeLimit);
      assertEveryFindingHinted(whole, file);
    }
  });
}
