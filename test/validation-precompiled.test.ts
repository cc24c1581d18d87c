/**
 * The precompiled validators (src/validation/precompile.ts, loaded by precompiled.ts): the build's
 * modules are what a start uses, they accept and refuse exactly what ajv compiling the same
 * schemas at run time does, explain a failure with the same errors (parentSchema the very object
 * of the loaded schema, which translate.ts relies on), and a module generated from other schema
 * files is never used.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ValidateFunction } from 'ajv';
import { newAjv } from '../src/validation/ajv-instances.js';
import { ajvOptions, DIALECT_SCHEMAS, DIALECTS, recipeFingerprint } from '../src/validation/ajv-recipe.js';
import { createDocumentValidator, validatorOrigins } from '../src/validation/index.js';
import { loadPrecompiled, precompiledDir } from '../src/validation/precompiled.js';
import { loadSchemas, loadSchemaTexts, type SchemaName } from '../src/validation/schema-files.js';
import { BIN, REPO_ROOT, ensureBuilt } from './support/built.js';

// Sources run with tsx read the repository's build, as the in-process test registries do.
ensureBuilt();
const corpus = join(REPO_ROOT, 'test/fixtures/corpus');
const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));
const cardFiles = readdirSync(join(corpus, 'cards')).filter((f) => f.endsWith('.json'));
const cards = cardFiles.map((f) => readJson(join(corpus, 'cards', f)) as Record<string, unknown>);
const toolspecs = readdirSync(join(corpus, 'toolspecs'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => readJson(join(corpus, 'toolspecs', f)) as { tools: Record<string, unknown>[] });

function loaded(dialect: (typeof DIALECTS)[number], role: 'fast' | 'explain' = 'fast'): Readonly<Record<string, ValidateFunction>> {
  const result = loadPrecompiled(precompiledDir(), dialect, recipeFingerprint(loadSchemaTexts()), role);
  assert.ok(result.ok, result.ok ? '' : result.reason);
  return result.validators;
}

/** The document and variants of it: each member left out, and each replaced by values of other types. */
function variants(doc: Record<string, unknown>): unknown[] {
  const out: unknown[] = [doc];
  for (const key of Object.keys(doc)) {
    const { [key]: _dropped, ...rest } = doc;
    out.push(rest);
    for (const other of [1, 'x', '', [], {}, null, true, [doc[key]]]) out.push({ ...doc, [key]: other });
  }
  return out;
}

test('a validator made at start-up uses the build\'s precompiled validators for every dialect', () => {
  createDocumentValidator({ maxDocumentBytes: 100_000 });
  assert.deepEqual(validatorOrigins(), { 'draft-07': 'precompiled', '2019-09': 'precompiled', '2020-12': 'precompiled' });
});

test('the built CLI loads them too', () => {
  const card = join(corpus, 'cards', cardFiles[0]!);
  const r = spawnSync(process.execPath, [BIN, 'validate', card], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, NODE_DEBUG: 'a2a-registry' }, timeout: 60_000 });
  assert.match(r.stderr, /(draft-07|2020-12) fast validators: precompiled/, r.stderr);
  assert.doesNotMatch(r.stderr, /compiled at run time/);
});

test('precompiled validators accept, refuse and explain exactly as run-time compiled ones do', () => {
  const schemas = loadSchemas();
  const docs: Record<SchemaName, unknown[]> = {
    cardV03: cards.flatMap(variants),
    cardV10: cards.flatMap(variants),
    toolspec: toolspecs.flatMap((t) => [...variants(t), ...t.tools.slice(0, 3).map((tool) => ({ tools: variants(tool) }))]),
    serverMeta: [{ name: 'Files', url: 'https://files.acme-corp.io/mcp' }, { name: 'Files', url: 'not a url' }, { name: 'Files', url: 'https://x.io/mcp', version: 1 }].flatMap(variants),
  };
  for (const dialect of DIALECTS) {
    const pre = loaded(dialect);
    const preExplain = loaded(dialect, 'explain');
    for (const name of DIALECT_SCHEMAS[dialect]) {
      const compiled = newAjv(dialect, ajvOptions(false)).compile(schemas[name]);
      const explain = newAjv(dialect, ajvOptions(true)).compile(schemas[name]);
      let refused = 0;
      for (const doc of docs[name]) {
        const expected = compiled(doc);
        const what = `${dialect} ${name}: ${JSON.stringify(doc).slice(0, 200)}`;
        assert.equal(pre[name]!(doc), expected, what);
        // The first error too (nothing reads it, but it shows the code is the same).
        assert.deepEqual(pre[name]!.errors ?? null, compiled.errors ?? null);
        if (!expected) refused++;
        assert.equal(preExplain[name]!(doc), expected, what);
        assert.equal(explain(doc), expected, what);
        const [got, want] = [preExplain[name]!.errors ?? [], explain.errors ?? []];
        assert.deepEqual(got, want, what);
        got.forEach((e, i) => assert.equal(e.parentSchema, want[i]!.parentSchema, `${what}: parentSchema of error ${i} is not the loaded schema's object`));
      }
      // Both outcomes were exercised.
      assert.ok(refused > 0 && refused < docs[name].length, `${name}: ${refused} of ${docs[name].length} refused`);
    }
  }
});

test('precompiled meta-schemas judge tool schemas as ajv.validateSchema does', () => {
  const userSchemas: Record<string, unknown>[] = toolspecs.flatMap((t) => t.tools.flatMap((tool) => [tool.inputSchema, tool.outputSchema])).filter((s) => typeof s === 'object' && s !== null) as Record<string, unknown>[];
  const broken = [{ type: 'str' }, { required: true }, { properties: [] }, { minLength: -1 }, { items: 3 }, { $defs: { a: { type: 'nope' } } }, { prefixItems: {} }, { $recursiveRef: 1 }, { $dynamicRef: 2 }, { dependencies: { a: 3 } }];
  for (const dialect of DIALECTS) {
    const [pre, preExplain] = [loaded(dialect), loaded(dialect, 'explain')];
    const [ajv, explain] = [newAjv(dialect, ajvOptions(false)), newAjv(dialect, ajvOptions(true))];
    let refused = 0;
    for (const schema of [...userSchemas.flatMap(variants), ...broken]) {
      const { $schema: _declared, ...body } = schema as Record<string, unknown>;
      const expected = ajv.validateSchema(body) === true;
      const what = `${dialect}: ${JSON.stringify(body).slice(0, 200)}`;
      assert.equal(pre.meta!(body), expected, what);
      if (!expected) refused++;
      assert.equal(preExplain.meta!(body), expected, what);
      explain.validateSchema(body);
      assert.deepEqual(preExplain.meta!.errors ?? [], explain.errors ?? [], what);
    }
    assert.ok(refused > 0, dialect);
  }
});

test('a module generated from other schema files, or missing, is not used (run-time compile instead)', () => {
  const texts = loadSchemaTexts();
  for (const name of Object.keys(texts) as SchemaName[]) {
    const edited = recipeFingerprint({ ...texts, [name]: texts[name].replace('"', ' "') });
    for (const dialect of DIALECTS) {
      for (const role of ['fast', 'explain'] as const) {
        const result = loadPrecompiled(precompiledDir(), dialect, edited, role);
        assert.equal(result.ok, false);
        assert.match(result.ok ? '' : result.reason, /generated from other schema files, options or ajv version \(run npm run build\)/);
      }
    }
  }
  const missing = loadPrecompiled(join(REPO_ROOT, 'no-such-dir/'), '2020-12', recipeFingerprint(texts));
  assert.match(missing.ok ? '' : missing.reason, /2020-12\.js not found \(run npm run build\)/);
});
