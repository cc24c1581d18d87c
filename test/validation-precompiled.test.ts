/**
 * The precompiled fast validators (src/validation/precompile.ts, loaded by precompiled.ts): the
 * build's modules are what a start uses, they accept and refuse exactly what ajv compiling the
 * same schemas at run time does, and a module generated from other schema files is never used.
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

function loaded(dialect: (typeof DIALECTS)[number]): Readonly<Record<string, ValidateFunction>> {
  const result = loadPrecompiled(precompiledDir(), dialect, recipeFingerprint(loadSchemaTexts()));
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
  assert.match(r.stderr, /(draft-07|2020-12) validators: precompiled/, r.stderr);
  assert.doesNotMatch(r.stderr, /compiled at run time/);
});

test('precompiled validators accept and refuse exactly what run-time compiled ones do', () => {
  const schemas = loadSchemas();
  const docs: Record<SchemaName, unknown[]> = {
    cardV03: cards.flatMap(variants),
    cardV10: cards.flatMap(variants),
    toolspec: toolspecs.flatMap((t) => [...variants(t), ...t.tools.slice(0, 3).map((tool) => ({ tools: variants(tool) }))]),
    serverMeta: [{ name: 'Files', url: 'https://files.acme-corp.io/mcp' }, { name: 'Files', url: 'not a url' }, { name: 'Files', url: 'https://x.io/mcp', version: 1 }].flatMap(variants),
  };
  for (const dialect of DIALECTS) {
    const pre = loaded(dialect);
    for (const name of DIALECT_SCHEMAS[dialect]) {
      const compiled = newAjv(dialect, ajvOptions(false)).compile(schemas[name]);
      let refused = 0;
      for (const doc of docs[name]) {
        const expected = compiled(doc);
        assert.equal(pre[name]!(doc), expected, `${dialect} ${name}: ${JSON.stringify(doc).slice(0, 200)}`);
        // The first error too (nothing reads it, but it shows the code is the same).
        assert.deepEqual(pre[name]!.errors ?? null, compiled.errors ?? null);
        if (!expected) refused++;
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
    const pre = loaded(dialect);
    const ajv = newAjv(dialect, ajvOptions(false));
    let refused = 0;
    for (const schema of [...userSchemas.flatMap(variants), ...broken]) {
      const { $schema: _declared, ...body } = schema as Record<string, unknown>;
      const expected = ajv.validateSchema(body) === true;
      assert.equal(pre.meta!(body), expected, `${dialect}: ${JSON.stringify(body).slice(0, 200)}`);
      if (!expected) refused++;
    }
    assert.ok(refused > 0, dialect);
  }
});

test('a module generated from other schema files, or missing, is not used (run-time compile instead)', () => {
  const texts = loadSchemaTexts();
  for (const name of Object.keys(texts) as SchemaName[]) {
    const edited = recipeFingerprint({ ...texts, [name]: texts[name].replace('"', ' "') });
    for (const dialect of DIALECTS) {
      const result = loadPrecompiled(precompiledDir(), dialect, edited);
      assert.equal(result.ok, false);
      assert.match(result.ok ? '' : result.reason, /generated from other schema files, options or ajv version \(run npm run build\)/);
    }
  }
  const missing = loadPrecompiled(join(REPO_ROOT, 'no-such-dir/'), '2020-12', recipeFingerprint(texts));
  assert.match(missing.ok ? '' : missing.reason, /2020-12\.js not found \(run npm run build\)/);
});
