/**
 * MCP server validation: server metadata, the toolspec, and each tool's input/output schema
 * checked as a JSON Schema of its declared dialect, safely (never compiled, no remote refs,
 * bounded size and depth, pattern syntax only).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import type { Finding } from '../src/contract/types.js';
import { compactJsonBytes, createDocumentValidator, type Verdict } from '../src/validation/index.js';

const validator = createDocumentValidator({ maxDocumentBytes: 10_240 });
const server = { name: 'Files', url: 'https://files.acme-corp.io/mcp', description: 'Workspace files', version: '1.0.0' };
type Json = Record<string, unknown>;

const tool = (inputSchema: unknown, extra: Json = {}): Json => ({ name: 'search_files', description: 'Searches files.', inputSchema, ...extra });
const check = (toolspec: unknown, meta: unknown = server, v = validator): Verdict =>
  v.validateMcpServer(meta, toolspec, compactJsonBytes(toolspec));
const checkSchema = (inputSchema: unknown): Verdict => check({ tools: [tool(inputSchema)] });

function mustFind(list: Finding[], path: string, rule?: string): Finding {
  const f = list.find((x) => x.path === path && (rule === undefined || x.rule === rule));
  assert.ok(f, `expected a finding at ${path}${rule ? ` (${rule})` : ''}; got ${JSON.stringify(list.map((x) => [x.path, x.rule, x.message]))}`);
  return f;
}

test('a valid toolspec is accepted without warnings', () => {
  const v = check({
    tools: [
      tool({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, { title: 'Search', annotations: { readOnlyHint: true } }),
      tool({ type: 'object' }, { name: 'list_files', outputSchema: { type: 'object', properties: { files: { type: 'array' } } } }),
    ],
    nextCursor: 'abc',
  });
  assert.equal(v.valid, true, JSON.stringify(v.errors));
  assert.equal(v.kind, 'mcp-server');
  assert.equal(v.generation, undefined);
  assert.deepEqual(v.warnings, []);
});

// --- dialects ------------------------------------------------------------------------------

const objectSchema = { type: 'object', properties: { q: { type: 'string', minLength: 1 } }, required: ['q'] };

test('dialect draft-07 is accepted and checked as draft-07', () => {
  assert.equal(checkSchema({ $schema: 'http://json-schema.org/draft-07/schema#', ...objectSchema, definitions: { a: { type: 'string' } } }).valid, true);
  // draft-07 `items` may be an array; `dependencies` exists; `required: true` does not.
  assert.equal(checkSchema({ $schema: 'http://json-schema.org/draft-07/schema', type: 'object', properties: { t: { type: 'array', items: [{ type: 'string' }] } } }).valid, true);
  // draft-03's `"required": true` inside a property is a real-world mistake: draft-07 wants an array on the parent.
  const draft03 = checkSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { q: { type: 'string', required: true } } });
  assert.match(mustFind(draft03.errors, '/toolspec/tools/0/inputSchema/properties/q/required', 'invalid-schema').hint!, /"required": \["q"\]/);
  const wrong = checkSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { q: { minLength: 'one' } } });
  mustFind(wrong.errors, '/toolspec/tools/0/inputSchema/properties/q/minLength', 'invalid-schema');
});

test('dialect 2019-09 is accepted and checked as 2019-09', () => {
  assert.equal(checkSchema({ $schema: 'https://json-schema.org/draft/2019-09/schema', ...objectSchema, $defs: { a: { type: 'string' } } }).valid, true);
  const v = checkSchema({ $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', properties: { a: { type: 'obj' } } });
  assert.match(mustFind(v.errors, '/toolspec/tools/0/inputSchema/properties/a/type', 'invalid-schema').message, /JSON Schema type/);
});

test('dialect 2020-12 is accepted and checked as 2020-12', () => {
  assert.equal(checkSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...objectSchema, $defs: { a: { prefixItems: [{ type: 'string' }] } } }).valid, true);
  const v = checkSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', required: 'q' });
  mustFind(v.errors, '/toolspec/tools/0/inputSchema/required', 'invalid-schema');
});

test('no $schema means 2020-12', () => {
  assert.equal(checkSchema(objectSchema).valid, true);
  const v = checkSchema({ type: 'object', properties: { a: { minItems: -1 } } });
  assert.match(mustFind(v.errors, '/toolspec/tools/0/inputSchema/properties/a/minItems', 'invalid-schema').message, /2020-12/);
});

test('an unsupported dialect is an error naming the supported ones', () => {
  for (const uri of ['http://json-schema.org/draft-04/schema#', 'http://json-schema.org/draft-06/schema#', 'https://example.org/my-dialect']) {
    const v = checkSchema({ $schema: uri, type: 'object' });
    assert.equal(v.errorCode, 'VALIDATION_FAILED');
    const f = mustFind(v.errors, '/toolspec/tools/0/inputSchema/$schema', 'unsupported-dialect');
    for (const d of ['draft-07', '2019-09', '2020-12']) assert.match(f.message + f.hint, new RegExp(d));
  }
});

test('outputSchema is checked too, and (MCP 2026-07-28) need not be an object schema', () => {
  assert.equal(check({ tools: [tool(objectSchema, { outputSchema: { type: 'array', items: { type: 'string' } } })] }).valid, true);
  const v = check({ tools: [tool(objectSchema, { outputSchema: { $schema: 'http://json-schema.org/draft-03/schema#' } })] });
  mustFind(v.errors, '/toolspec/tools/0/outputSchema/$schema', 'unsupported-dialect');
});

// --- safety --------------------------------------------------------------------------------

test('a remote $ref is an error and is never fetched; local refs are fine', () => {
  for (const ref of ['https://schemas.acme-corp.io/address.json', 'address.json#/x', '//host/s.json']) {
    const v = checkSchema({ type: 'object', properties: { a: { $ref: ref } } });
    const f = mustFind(v.errors, '/toolspec/tools/0/inputSchema/properties/a/$ref', 'remote-ref');
    assert.match(f.hint!, /\$defs/);
  }
  assert.equal(checkSchema({ type: 'object', properties: { a: { $ref: '#/$defs/addr' } }, $defs: { addr: { type: 'string' } } }).valid, true);
  assert.equal(checkSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { a: { $ref: '#/definitions/x' }, b: { $ref: '#' } }, definitions: { x: {} } }).valid, true);
  assert.equal(checkSchema({ type: 'object', properties: { a: { $ref: '#addr' } }, $defs: { addr: { $anchor: 'addr', type: 'string' } } }).valid, true);
  mustFind(checkSchema({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }).errors, '/toolspec/tools/0/inputSchema/properties/a/$ref', 'unresolved-ref');
});

test('pattern syntax is checked with the u flag, without running the pattern', () => {
  const bad = checkSchema({ type: 'object', properties: { a: { type: 'string', pattern: '([a-z]' } } });
  mustFind(bad.errors, '/toolspec/tools/0/inputSchema/properties/a/pattern', 'bad-pattern');
  // Valid without the u flag, invalid with it (a lone escape of a non-syntax character).
  mustFind(checkSchema({ type: 'object', properties: { a: { pattern: '\\-\\q' } } }).errors, '/toolspec/tools/0/inputSchema/properties/a/pattern', 'bad-pattern');
  mustFind(checkSchema({ type: 'object', patternProperties: { '[': {} } }).errors, '/toolspec/tools/0/inputSchema/patternProperties/[', 'bad-pattern');
  // A catastrophic-backtracking pattern is valid syntax: accepted, and never run.
  const start = performance.now();
  const v = checkSchema({ type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$', default: 'a'.repeat(40) + '!' } } });
  assert.equal(v.valid, true);
  // Run, the pattern would take hours (2^40 steps); 2 s is slack for a loaded machine.
  assert.ok(performance.now() - start < 2000, 'no regex was run on data');
  // A property *named* "pattern" is not a pattern.
  assert.equal(checkSchema({ type: 'object', properties: { pattern: { type: 'string' } } }).valid, true);
});

test('deep nesting is refused before ajv sees it (no stack overflow)', () => {
  let deep: Json = { type: 'string' };
  for (let i = 0; i < 5_000; i++) deep = { type: 'object', properties: { x: deep } };
  const big = createDocumentValidator({ maxDocumentBytes: 10_000_000 });
  const v = big.validateMcpServer(server, { tools: [tool(deep)] }, 200_000); // too deep for JSON.stringify to measure
  assert.equal(v.errorCode, 'VALIDATION_FAILED');
  mustFind(v.errors, '/toolspec/tools/0/inputSchema', 'schema-too-deep');
  let fine: Json = { type: 'string' };
  for (let i = 0; i < 15; i++) fine = { type: 'object', properties: { x: fine } };
  assert.equal(checkSchema(fine).valid, true);
});

test('very large schemas are refused before ajv sees them', () => {
  const properties = Object.fromEntries(Array.from({ length: 6_000 }, (_, i) => [`p${i}`, { type: 'string' }]));
  const big = createDocumentValidator({ maxDocumentBytes: 10_000_000 });
  const v = check({ tools: [tool({ type: 'object', properties })] }, server, big);
  mustFind(v.errors, '/toolspec/tools/0/inputSchema', 'schema-too-large');
});

/** How many schemas ajv compiles while `run` runs (every dialect's instance shares ajv's core). */
function compilesDuring(run: () => void): number {
  const core = Object.getPrototypeOf(Ajv.prototype) as { _compileSchemaEnv: (...a: unknown[]) => unknown };
  const original = core._compileSchemaEnv;
  let compiled = 0;
  core._compileSchemaEnv = function (this: unknown, ...args: unknown[]) {
    compiled++;
    return original.apply(this, args);
  };
  try {
    run();
  } finally {
    core._compileSchemaEnv = original;
  }
  return compiled;
}

const DIALECT_URIS = [undefined, 'http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2019-09/schema', 'https://json-schema.org/draft/2020-12/schema'];

test('validating a valid document never compiles anything; explaining a failure at most once per schema', () => {
  // The fast validators were readied at construction (precompiled, or compiled then).
  const valid = compilesDuring(() => {
    for (const $schema of DIALECT_URIS) assert.equal(checkSchema({ $schema, type: 'object', properties: { a: { type: 'string' } } }).valid, true);
    assert.equal(check({ tools: [tool({ type: 'object' })] }).valid, true);
  });
  assert.equal(valid, 0);
  // An invalid document's all-errors validator is loaded (precompiled by the build) or compiled when
  // first needed, then kept: the second failure of each kind compiles nothing.
  const fail = (): void => {
    for (const $schema of DIALECT_URIS) assert.equal(checkSchema({ $schema, type: 'object', properties: { a: { type: 'nope' } } }).valid, false);
    assert.equal(check({ tools: [] }, { name: '' }).valid, false);
    assert.equal(validator.validateAgentCard({ name: 1, supportedInterfaces: 2 }, 10).valid, false);
  };
  compilesDuring(fail);
  assert.equal(compilesDuring(fail), 0);
});

// --- toolspec and server metadata ------------------------------------------------------------

test('inputSchema must be an object schema with type "object"', () => {
  for (const inputSchema of [{ type: 'string' }, { properties: {} }]) {
    const v = checkSchema(inputSchema);
    assert.match(mustFind(v.errors, '/toolspec/tools/0/inputSchema/type').hint!, /"type": "object"/);
  }
  const missing = check({ tools: [{ name: 'a', description: 'd', input_schema: { type: 'object' } }] });
  assert.match(mustFind(missing.errors, '/toolspec/tools/0/inputSchema', 'required').hint!, /Rename "input_schema"/);
  // Not an object at all, or a type list: the same advice.
  assert.match(mustFind(checkSchema('object').errors, '/toolspec/tools/0/inputSchema', 'type').hint!, /"type": "object"/);
  for (const f of checkSchema({ type: ['object', 'null'] }).errors) assert.match(f.hint!, /"type": "object"/);
});

test('type names from programming languages ("str", "String", "int", "float") are errors whose hint gives the JSON Schema name', () => {
  const properties = { a: { type: 'str' }, b: { type: 'String' }, c: { type: ['int', 'null'] }, d: { type: 'float' }, e: { type: 'date' }, f: { type: ['constructor', 'null'] } };
  for (const $schema of [undefined, 'http://json-schema.org/draft-07/schema#']) {
    const v = checkSchema({ ...($schema ? { $schema } : {}), type: 'object', properties });
    const hint = (p: string): string => mustFind(v.errors, `/toolspec/tools/0/inputSchema/properties/${p}/type`, 'invalid-schema').hint ?? '(none)';
    assert.match(hint('a'), /Did you mean "type": "string"\?/);
    assert.match(hint('b'), /Did you mean "type": "string"\?/);
    assert.match(hint('c'), /Did you mean "type": \["integer","null"\]\?/);
    assert.match(hint('d'), /Did you mean "type": "number"\?/);
    assert.match(hint('e'), /"format": "date"/);
    assert.match(hint('f'), /^Use one of the seven JSON Schema type names/, 'a prototype member name is no alias');
  }
});

test('toolspec shape: {"tools": [...]} with at least one tool; hints for a bare list and a JSON-RPC envelope', () => {
  assert.match(mustFind(check([tool(objectSchema)]).errors, '/toolspec', 'type').hint!, /\{"tools"/);
  assert.match(mustFind(check({ jsonrpc: '2.0', id: 1, result: { tools: [] } }).errors, '/toolspec/tools', 'required').hint!, /"result"/);
  mustFind(check({ tools: [] }).errors, '/toolspec/tools', 'min-items');
  mustFind(check({ tools: [tool(objectSchema, { name: '' })] }).errors, '/toolspec/tools/0/name', 'min-length');
});

test('server metadata: name required and non-empty, url an absolute http(s) URL', () => {
  const ok = { tools: [tool(objectSchema)] };
  mustFind(check(ok, { url: 'https://m.acme-corp.io/mcp' }).errors, '/mcpServer/name', 'required');
  mustFind(check(ok, { name: '', url: 'https://m.acme-corp.io/mcp' }).errors, '/mcpServer/name', 'min-length');
  mustFind(check(ok, { name: 'n' }).errors, '/mcpServer/url', 'required');
  for (const url of ['/mcp', 'ftp://m.acme-corp.io', 'm.acme-corp.io/mcp']) {
    const v = check(ok, { name: 'n', url });
    assert.match(mustFind(v.errors, '/mcpServer/url').message, /absolute http\(s\) URL/, url);
  }
  // An unfilled template: said, with the placeholder to fill in (it was "must be an absolute http(s) URL").
  const template = check(ok, { name: 'n', url: '{BASE_URL}/mcp' });
  assert.equal(template.errors.length, 1, JSON.stringify(template.errors));
  assert.match(mustFind(template.errors, '/mcpServer/url', 'url-placeholder').hint!, /^Replace "\{BASE_URL\}" with the public address clients reach the MCP server at/);
  mustFind(check(ok, { name: 'n', url: 'http://@@@:x' }).errors, '/mcpServer/url', 'invalid-url');
  // A control character in a URL that reads as one: said, with its position (it was "must be an absolute http(s) URL").
  for (const [url, at] of [['https://m.acme-corp.io/mcp\n', 'U\\+000A at position 26'], ['https://m.acme-\tcorp.io/mcp', 'U\\+0009 at position 15']] as const) {
    const v = check(ok, { name: 'n', url });
    assert.equal(v.errors.length, 1, JSON.stringify(v.errors));
    assert.match(mustFind(v.errors, '/mcpServer/url', 'url-control-character').message, new RegExp(`control character ${at}`), url);
  }
  mustFind(check(ok, 'files').errors, '/mcpServer', 'type');
  mustFind(validator.validateMcpServer(undefined, ok, 100).errors, '/mcpServer', 'required');
  assert.equal(check(ok, { name: 'n', url: 'HTTPS://M.ACME-CORP.IO/mcp', extra: true }).valid, true);
});

test('size limit applies to the toolspec: 10,240 bytes pass, 10,241 are TOO_LARGE', () => {
  const spec = { tools: [tool(objectSchema, { description: '' })] };
  (spec.tools[0] as Json).description = 'd'.repeat(10_240 - compactJsonBytes(spec));
  assert.equal(compactJsonBytes(spec), 10_240);
  assert.equal(check(spec).valid, true);
  (spec.tools[0] as Json).description += 'd';
  const v = check(spec);
  assert.equal(v.errorCode, 'TOO_LARGE');
  assert.equal(v.sizeBytes, 10_241);
  assert.match(v.message!, /10,241 bytes.*10,240 bytes/);
});

// --- warnings ------------------------------------------------------------------------------

test("a tool's annotations.title is a display name: control and bidirectional characters are refused there as in its title", () => {
  const v = check({ tools: [tool(objectSchema, { annotations: { title: 'Read \u001b[31mfiles' } }), tool(objectSchema, { name: 'write', annotations: { title: 'Evil\u202Eexe.txt' } })] });
  assert.match(mustFind(v.errors, '/toolspec/tools/0/annotations/title', 'control-character').message, /U\+001B at position 5/);
  mustFind(v.errors, '/toolspec/tools/1/annotations/title', 'bidi-control');
});

test("a tool's parameter names are names and their descriptions texts: the web page lists both (\"confirm\\u202eeurt\\u202c\" showed as \"confirmtrue\")", () => {
  const properties = (key: string, description: string): Json => ({ type: 'object', properties: { [key]: { type: 'string', description } } });
  const v = check({ tools: [tool(properties('confirm\u202Eeurt\u202C', '\u001b[31mred')), tool(properties('path\tname', 'right \u202Eleft'), { name: 'write' })] });
  assert.equal(v.valid, false);
  const params = '/toolspec/tools/0/inputSchema/properties';
  assert.match(mustFind(v.errors, `${params}/confirm\u202Eeurt\u202C`, 'bidi-control').message, /U\+202E at position 7/);
  assert.match(mustFind(v.errors, `${params}/confirm\u202Eeurt\u202C/description`, 'control-character').message, /U\+001B at position 0/);
  assert.match(mustFind(v.errors, '/toolspec/tools/1/inputSchema/properties/path\tname', 'control-character').message, /U\+0009 at position 4/);
  // In running text a bidirectional control is a warning, as in a tool's description.
  mustFind(v.warnings, '/toolspec/tools/1/inputSchema/properties/path\tname/description', 'bidi-control');
  assert.equal(v.errors.length, 3, JSON.stringify(v.errors));
  assert.equal(check({ tools: [tool(properties('confirm', 'Say \u05e9\u05dc\u05d5\u05dd first'))] }).valid, true, 'right-to-left script itself passes');
});

test('warnings: tool names outside [A-Za-z0-9_.-]{1,128}, duplicate names, no description', () => {
  const v = check({
    tools: [
      tool(objectSchema, { name: 'search files' }),
      tool(objectSchema, { name: 'a'.repeat(129) }),
      tool(objectSchema, { name: 'dup', description: '  ' }),
      tool(objectSchema, { name: 'dup' }),
      { name: 'nodesc', inputSchema: objectSchema },
    ],
  });
  assert.equal(v.valid, true, JSON.stringify(v.errors));
  mustFind(v.warnings, '/toolspec/tools/0/name', 'tool-name-format');
  mustFind(v.warnings, '/toolspec/tools/1/name', 'tool-name-format');
  mustFind(v.warnings, '/toolspec/tools/2/description', 'tool-without-description');
  mustFind(v.warnings, '/toolspec/tools/3/name', 'duplicate-tool-name');
  mustFind(v.warnings, '/toolspec/tools/4/description', 'tool-without-description');
  assert.equal(v.warnings.length, 5);
});

test('warnings: placeholder, loopback and (when asked) plain-http server URLs', () => {
  const ok = { tools: [tool(objectSchema)] };
  mustFind(check(ok, { name: 'n', url: 'http://localhost:8080/mcp' }).warnings, '/mcpServer/url', 'loopback-url');
  mustFind(check(ok, { name: 'n', url: 'https://mcp.example.com/mcp' }).warnings, '/mcpServer/url', 'placeholder-url');
  mustFind(check(ok, { name: 'n', url: 'https://YOUR_SERVER/mcp' }).warnings, '/mcpServer/url', 'placeholder-url');
  assert.deepEqual(check(ok, { name: 'n', url: 'http://m.acme-corp.io/mcp' }).warnings, []);
  const strict = createDocumentValidator({ maxDocumentBytes: 10_240, warnInsecureHttp: true });
  mustFind(check(ok, { name: 'n', url: 'http://m.acme-corp.io/mcp' }, strict).warnings, '/mcpServer/url', 'insecure-url');
});

test('a schema\'s maximum past a double\'s range (1e400) is refused as that, not "must be a number, found a number"', () => {
  const text = JSON.stringify({ tools: [tool({ type: 'object', properties: { n: { type: 'number', maximum: 1 } } })] }).replace('"maximum":1', '"maximum":1e400');
  const toolspec = JSON.parse(text) as Json;
  const path = '/toolspec/tools/0/inputSchema/properties/n/maximum';
  // Sent inline, the number is known only as read; uploaded, as written.
  const inline = check(toolspec);
  assert.deepEqual(inline.errors.map((f) => [f.path, f.rule, f.message]), [[path, 'number-out-of-range', 'this number is beyond the largest number JSON here can hold (about 1.8e308): write a smaller number or a string']]);
  const uploaded = validator.validateMcpServer(server, toolspec, text.length, { text, at: '/toolspec' });
  assert.deepEqual(uploaded.errors.map((f) => [f.path, f.message]), [[path, '1e400 is beyond the largest number JSON here can hold (about 1.8e308): write a smaller number or a string']]);
  assert.equal(uploaded.message, `The MCP server registration is not valid (1 error). ${path}: 1e400 is beyond the largest number JSON here can hold (about 1.8e308): write a smaller number or a string.`);
  // 1e300 is a legitimate maximum, and so is an int64 one (read rounded: a warning with the text).
  assert.equal(checkSchema({ type: 'object', properties: { n: { type: 'number', maximum: 1e300 } } }).valid, true);
  const int64 = text.replace('1e400', '9223372036854775807');
  const v = validator.validateMcpServer(server, JSON.parse(int64), int64.length, { text: int64, at: '/toolspec' });
  assert.equal(v.valid, true);
  mustFind(v.warnings, path, 'number-rounded');
  // A name given twice in the uploaded toolspec, at its path in the document.
  const twice = text.replace('1e400', '1').replace('{"tools":', '{"tools":[],"tools":');
  const dup = validator.validateToolspec(JSON.parse(twice), twice.length, { text: twice, at: '/toolspec' });
  assert.deepEqual(dup.errors.map((f) => [f.path, f.rule]), [['/toolspec/tools', 'duplicate-key']]);
});
