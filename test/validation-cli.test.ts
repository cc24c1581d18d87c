/**
 * `a2a-registry validate` run as a child process on corpus files, as a user runs it: the built
 * bin/a2a-registry.js (test/support/built.ts builds it when the sources are newer).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BIN, REPO_ROOT as repo, ensureBuilt } from './support/built.js';
import { tempDir } from './support/temp.js';
const corpus = fileURLToPath(new URL('./fixtures/corpus/', import.meta.url));
const card = (f: string): string => join(corpus, 'cards', f);
const toolspec = (f: string): string => join(corpus, 'toolspecs', f);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], input?: string): Run {
  ensureBuilt();
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: repo,
    encoding: 'utf8',
    input,
    env: { ...process.env, NO_COLOR: '' },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface JsonResult {
  file: string;
  valid: boolean;
  documentKind?: string;
  generation?: string;
  errorCode?: string;
  message?: string;
  sizeBytes?: number;
  errors?: Array<{ path: string; message: string; hint?: string; rule?: string }>;
  warnings?: Array<{ path: string; rule?: string }>;
  error?: { code: string; message: string; hint?: string };
}

function json(run: Run): { valid: boolean; results: JsonResult[] } {
  return JSON.parse(run.stdout) as { valid: boolean; results: JsonResult[] };
}

test('a valid v1.0 card: exit 0, readable output without colour when not a TTY', () => {
  const r = cli(['validate', card('michaelcolenso__babynames__apps_web_public_wk_agent-card.json')]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /valid .*A2A v1\.0 agent card, 1,725 bytes/);
  assert.ok(!r.stdout.includes('\u001b['), 'no ANSI colour codes when stdout is not a TTY');
});

test('an invalid card: exit 1, each finding with its line and column in the file, path, message and hint', () => {
  const file = card('UltravioletaDAO__x402-rs__static_wk_agent-card.json');
  const r = cli(['validate', file]);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /invalid .*VALIDATION_FAILED/);
  // A missing member points at the object that lacks it (line 18: the first interface's "{").
  assert.ok(r.stdout.includes(`error   ${file}:18:5  /supportedInterfaces/0/protocolBinding: required field "protocolBinding" is missing`), r.stdout);
  assert.match(r.stdout, /hint: Rename "transport" to "protocolBinding"/);
  // A wrong value points at its member ("capabilities": [...] on line 28).
  assert.ok(r.stdout.includes(`error   ${file}:28:3  /capabilities: must be an object, found an array`), r.stdout);
  const j = json(cli(['validate', '--json', file]));
  const capabilities = j.results[0]!.errors!.find((e) => e.path === '/capabilities') as { location?: unknown } | undefined;
  assert.deepEqual(capabilities?.location, { file, line: 28, column: 3 });
});

test('--json: machine output for several files, cards and toolspecs detected by content', () => {
  const files = [
    card('Shiv33ndu__songgenerationa2a__agent-card.json'),
    card('Palo-Alto-AI-Research-Lab__agent-leash__agent-card.json'),
    toolspec('slack.json'),
    toolspec('tavily.json'),
  ];
  const r = cli(['validate', '--json', ...files]);
  assert.equal(r.code, 1);
  const out = json(r);
  assert.equal(out.valid, false);
  const [v03, unsupported, slack, tavily] = out.results;
  assert.deepEqual([v03!.valid, v03!.documentKind, v03!.generation], [true, 'agent', '0.3']);
  assert.equal(unsupported!.errorCode, 'UNSUPPORTED_VERSION');
  assert.deepEqual([slack!.valid, slack!.documentKind], [true, 'mcp-toolspec']);
  assert.equal(tavily!.errorCode, 'TOO_LARGE');
  assert.match(tavily!.message!, /11,731 bytes.*10,240 bytes/);
});

test('--max-bytes overrides the 10,240-byte default', () => {
  const r = cli(['validate', '--max-bytes', '20000', '--json', toolspec('tavily.json'), toolspec('datadog.json')]);
  assert.equal(r.code, 0, r.stdout);
  assert.equal(json(r).valid, true);
  const tight = cli(['validate', '--max-bytes', '600', card('agentcollusion__agent-card-scanner-core__examples_unsigned-card.json')]);
  assert.equal(tight.code, 1);
  assert.match(tight.stdout, /602 bytes; the limit is 600 bytes/);
});

test('bare toolspec paths point into the file; --mcp-url/--mcp-name (or their old names --server-url/--server-name) validate the metadata too', () => {
  const dir = tempDir('a2a-registry-cli-');
  const file = join(dir, 'toolspec.json');
  writeFileSync(file, JSON.stringify({ tools: [{ name: 'find', inputSchema: { type: 'string' } }] }));
  const r = cli(['validate', '--json', file]);
  assert.equal(r.code, 1);
  const res = json(r).results[0]!;
  assert.equal(res.errors![0]!.path, '/tools/0/inputSchema/type');
  assert.equal(res.warnings![0]!.path, '/tools/0/description');
  // A finding of a value an option gave is named at the option, as the user typed it.
  const withServer = cli(['validate', '--json', '--server-name', 'files', '--server-url', 'ftp://files', toolspec('slack.json')]);
  assert.equal(withServer.code, 1);
  assert.equal(json(withServer).results[0]!.errors![0]!.path, '--server-url');
  const withMcp = cli(['validate', '--json', '--mcp-name', 'files', '--mcp-url', 'ftp://files', toolspec('slack.json')]);
  assert.equal(withMcp.code, 1);
  assert.equal(json(withMcp).results[0]!.errors![0]!.path, '--mcp-url');
});

test('the --mcp-* options as register takes them: over a {"mcpServer", "toolspec"} document\'s server, never empty, a finding of their value at the option', () => {
  const dir = tempDir('a2a-registry-cli-');
  const wrapped = join(dir, 'wrapped.json');
  writeFileSync(wrapped, JSON.stringify({ mcpServer: { name: 'files', url: 'https://files.acme.dev/mcp' }, toolspec: JSON.parse(readFileSync(toolspec('slack.json'), 'utf8')) }));
  assert.equal(cli(['validate', wrapped]).code, 0);
  // The options were ignored for such a document: it passed with a URL that is none.
  const over = cli(['validate', wrapped, '--mcp-url', 'notaurl']);
  assert.equal(over.code, 1, over.stdout);
  assert.match(over.stdout, /^ {2}error {3}--mcp-url: must be an absolute http\(s\) URL; found "notaurl" \[pattern\]$/m);
  assert.match(over.stdout, /not valid \(1 error\)\. --mcp-url: must be/);
  assert.doesNotMatch(over.stdout, /wrapped\.json:\d+:\d+/, 'the value came from the option, not the file');
  const overJson = json(cli(['validate', '--json', wrapped, '--mcp-url', 'notaurl', '--mcp-description', 'Files']));
  assert.deepEqual(overJson.results[0]!.errors!.map((e) => e.path), ['--mcp-url']);
  // The document's own name, under its own path in the file, beside an option's URL.
  const named = json(cli(['validate', '--json', wrapped, '--server-url', 'ftp://files']));
  assert.deepEqual(named.results[0]!.errors!.map((e) => e.path), ['--server-url']);
  // An empty value is refused, as register refuses it: it would replace the document's.
  for (const args of [['--mcp-url', ''], ['--mcp-name', ' '], ['--server-name', ''], ['--server-url', ''], ['--mcp-version', '']]) {
    const r = cli(['validate', wrapped, ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}`);
    assert.match(r.stderr, /must not be empty/);
  }
  assert.equal(cli(['validate', wrapped, '--mcp-url', 'https://a.example/mcp', '--server-url', 'https://b.example/mcp']).code, 2);
  // A bare toolspec given half its server is a usage error, as register says it.
  const half = cli(['validate', '--json', toolspec('slack.json'), '--mcp-url', 'https://files.acme.dev/mcp']);
  assert.equal(half.code, 2);
  assert.deepEqual(JSON.parse(half.stdout), { error: { code: 'USAGE', message: 'an MCP toolspec needs its server: give --mcp-name <name> and --mcp-url <url>' } });
  // Beside an agent card they are refused as register refuses them, each named as typed: the card
  // was checked and said valid, the options not a word of, though the user believed them used.
  const besideCard = cli(['validate', '--json', join(repo, 'examples', 'agent-card.json'), '--mcp-name', 'files', '--server-url', 'https://files.acme.dev/mcp']);
  assert.equal(besideCard.code, 2, besideCard.stdout);
  const message = `${join(repo, 'examples', 'agent-card.json')} is an A2A agent card, and --mcp-name and --server-url give an MCP toolspec its server: leave them out to validate the card, or give the toolspec's file`;
  assert.deepEqual(JSON.parse(besideCard.stdout), { error: { code: 'USAGE', message } });
  assert.equal(besideCard.stderr, `a2a-registry: ${message}\n`);
  // A file that is no card beyond doubt (a toolspec with a "name" of its own) is the toolspec they
  // go with, as register sends it; it was checked as an agent card, the options unused.
  const nameInToolspec = join(dir, 'named-toolspec.json');
  writeFileSync(nameInToolspec, JSON.stringify({ name: 'files', ...JSON.parse(readFileSync(toolspec('slack.json'), 'utf8')) }));
  const asToolspec = json(cli(['validate', '--json', nameInToolspec, '--mcp-name', 'files', '--mcp-url', 'notaurl']));
  assert.equal(asToolspec.results[0]!.documentKind, 'mcp-toolspec');
  assert.deepEqual(asToolspec.results[0]!.errors!.map((e) => e.path), ['--mcp-url']);
  const help = cli(['validate', '--help']).stdout;
  for (const option of ['--mcp-name <name>', '--mcp-url <url>', '--mcp-description <text>', '--mcp-version <version>']) assert.ok(help.includes(option), option);
  assert.doesNotMatch(help, /--server-/);
});

test('a saved tools/list response (JSON-RPC envelope) is checked as a toolspec, with the advice an uploaded toolspec.json gets', () => {
  const dir = tempDir('a2a-registry-cli-');
  const file = join(dir, 'tools-list.json');
  writeFileSync(file, JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'ping', description: 'Pings.', inputSchema: { type: 'object' } }] } }));
  const res = json(cli(['validate', '--json', file])).results[0]!;
  assert.equal(res.documentKind, 'mcp-toolspec');
  assert.deepEqual(res.errors!.map((e) => [e.path, e.rule]), [['/tools', 'required']]);
  assert.match(res.errors![0]!.hint!, /Send the "result" of the tools\/list response/);
});

test('a misshapen MCP server document (half of one, its tools beside its server) is said as register and import say it: not eight card findings, nor "✓ valid"', () => {
  const dir = tempDir('a2a-registry-cli-');
  const server = { name: 'kiwi-files', url: 'https://kiwi.example.org/mcp' };
  const tools = [{ name: 'read', description: 'Reads a file.', inputSchema: { type: 'object' } }];
  const files = { serverOnly: { mcpServer: server }, toolspecOnly: { toolspec: { tools } }, beside: { mcpServer: server, tools } };
  const paths = Object.entries(files).map(([name, doc]) => {
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(doc));
    return join(dir, `${name}.json`);
  });
  // With the --mcp-* options too: the file's shape is wrong whatever they give.
  const r = cli(['validate', '--json', '--mcp-name', 'files', '--mcp-url', 'https://mcp.example.com/mcp', ...paths]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.deepEqual(
    json(r).results.map((res) => [res.valid, res.documentKind, res.errorCode, res.message, res.errors!.map((e) => [e.path, e.rule, e.hint])]),
    [
      [false, 'mcp-server', 'VALIDATION_FAILED', 'An MCP server document needs both "mcpServer" and "toolspec"; this one has no "toolspec".', [['/toolspec', 'required', 'Add the server\'s tools (its tools/list result): {"mcpServer": {...}, "toolspec": {"tools": [...]}}.']]],
      [false, 'mcp-server', 'VALIDATION_FAILED', 'An MCP server document needs both "mcpServer" and "toolspec"; this one has no "mcpServer".', [['/mcpServer', 'required', 'Add the server whose tools these are: {"mcpServer": {"name": "files", "url": "https://mcp.example.com/mcp"}, "toolspec": {...}}.']]],
      [false, 'mcp-server', 'VALIDATION_FAILED', 'An MCP server document keeps its tools under "toolspec"; this one has "tools" beside "mcpServer".', [['/tools', 'misplaced', 'Move it: {"mcpServer": {...}, "toolspec": {"tools": [...]}}.']]],
    ],
  );
  const human = cli(['validate', paths[2]!]);
  assert.equal(human.code, 1);
  assert.equal(
    human.stdout,
    `✗ invalid ${paths[2]} (MCP server document, ${Buffer.byteLength(JSON.stringify(files.beside))} bytes): VALIDATION_FAILED\n` +
      '  An MCP server document keeps its tools under "toolspec"; this one has "tools" beside "mcpServer".\n' +
      `  error   ${paths[2]}:1:${JSON.stringify(files.beside).indexOf('"tools"') + 1}  /tools: "tools" belongs inside "toolspec" [misplaced]\n` +
      '          hint: Move it: {"mcpServer": {...}, "toolspec": {"tools": [...]}}.\n',
  );
});

test('stdin with "-"', () => {
  const r = cli(['validate', '--json', '-'], readFileSync(card('Shiv33ndu__songgenerationa2a__agent-card.json'), 'utf8'));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(json(r).results[0]!.generation, '0.3');
  // Named as register and sign name it, not "-".
  assert.equal(json(r).results[0]!.file, 'standard input');
  const notJson = cli(['validate', '-'], '{\n  "name": "x",\n}\n');
  assert.equal(notJson.code, 1);
  assert.equal(notJson.stdout, '✗ invalid standard input:3:1: not valid JSON: trailing comma (JSON allows none before } or ])\n');
});

test('a file that is not JSON: exit 1, the line and column of the mistake', () => {
  const dir = tempDir('a2a-registry-cli-');
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, '{\n  "name": "x",\n  "skills": [1, 2,]\n}\n');
  const r = cli(['validate', bad]);
  assert.equal(r.code, 1);
  assert.ok(r.stdout.includes(`${bad}:3:19: not valid JSON: trailing comma`), r.stdout);
  const quotes = join(dir, 'quotes.json');
  writeFileSync(quotes, "{\n  'name': 'x'\n}");
  const j = json(cli(['validate', '--json', quotes]));
  assert.deepEqual(j.results[0]!.error, {
    code: 'NOT_JSON',
    message: `${quotes}:2:3: not valid JSON: strings and names need double quotes, not single quotes`,
    location: { file: quotes, line: 2, column: 3 },
  });
  // Saved as Latin-1: the registry refuses it as not UTF-8; validate said "✓ valid" (its letter read as U+FFFD).
  const latin1 = join(dir, 'latin1.json');
  writeFileSync(latin1, Buffer.from(readFileSync(join(repo, 'examples', 'agent-card.json'), 'utf8').replace(/"name": "/, '"name": "\u00c4'), 'latin1'));
  const l = cli(['validate', latin1]);
  assert.equal(l.code, 1, l.stdout);
  assert.match(l.stdout, new RegExp(`^✗ invalid ${latin1}:\\d+:\\d+: not valid JSON: byte 0xC4 is not UTF-8 \\(saved as Latin-1 or Windows-1252\\?\\); JSON is UTF-8: save it as UTF-8\n`));
});

test('a key given twice ("name": "A", "name": "B") is invalid, at the kept one\'s line and column, naming the other\'s (it printed "✓ valid")', () => {
  const dir = tempDir('a2a-registry-cli-');
  const dup = join(dir, 'dup.json');
  const card = JSON.stringify(JSON.parse(readFileSync(join(repo, 'examples', 'agent-card.json'), 'utf8')), null, 2);
  writeFileSync(dup, card.replace('{\n  "name"', '{\n  "name": "A",\n  "name"'));
  const r = cli(['validate', dup]);
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.stdout, /^✗ invalid .*dup\.json \(A2A v1\.0 agent card, [\d,]+ bytes\): VALIDATION_FAILED\n/);
  assert.ok(r.stdout.includes(`error   ${dup}:3:3  /name: "name" is given twice in this object (also at line 2, column 3): a JSON reader keeps only one, and readers differ in which [duplicate-key]`), r.stdout);
  const j = json(cli(['validate', '--json', dup])).results[0]!;
  assert.deepEqual(j.errors!.map((e) => [e.path, e.rule, (e as { location?: unknown }).location]), [['/name', 'duplicate-key', { file: dup, line: 3, column: 3 }]]);
});

test('numbers: one past a double\'s range (1e400) is invalid as written; one read rounded (an int64 maximum) is a warning saying what is stored', () => {
  const dir = tempDir('a2a-registry-cli-');
  const toolspec = (maximum: string): string =>
    JSON.stringify({ tools: [{ name: 'scale', description: 'Scales.', inputSchema: { type: 'object', properties: { n: { type: 'number', maximum: 7 } } } }] }, null, 2).replace('"maximum": 7', `"maximum": ${maximum}`);
  const huge = join(dir, 'huge.json');
  writeFileSync(huge, toolspec('1e400'));
  const r = cli(['validate', huge]);
  assert.equal(r.code, 1, r.stdout);
  // It said "must be a number, found a number. Write a number, without quotes."
  assert.ok(r.stdout.includes(`error   ${huge}:11:13  /tools/0/inputSchema/properties/n/maximum: 1e400 is beyond the largest number JSON here can hold (about 1.8e308): write a smaller number or a string [number-out-of-range]`), r.stdout);
  assert.doesNotMatch(r.stdout, /found a number/);
  const int64 = join(dir, 'int64.json');
  writeFileSync(int64, toolspec('9223372036854775807'));
  const w = cli(['validate', int64]);
  assert.equal(w.code, 0, w.stdout);
  assert.ok(w.stdout.includes(`warning ${int64}:11:13  /tools/0/inputSchema/properties/n/maximum: 9223372036854775807 is read as 9223372036854776000: JSON numbers here are IEEE 754 doubles, exact to about 16 significant digits [number-rounded]`), w.stdout);
});

test('a file of several documents, one per line (JSON lines): not JSON, with a hint to give each its own file', () => {
  const dir = tempDir('a2a-registry-cli-');
  const lines = join(dir, 'three.jsonl');
  const card = readFileSync(join(repo, 'examples', 'agent-card.json'), 'utf8');
  writeFileSync(lines, `${JSON.stringify(JSON.parse(card))}\n`.repeat(3));
  const r = cli(['validate', lines]);
  assert.equal(r.code, 1, r.stdout);
  // It said only "unexpected text after the JSON value".
  assert.equal(
    r.stdout,
    `✗ invalid ${lines}:2:1: not valid JSON: unexpected text after the JSON value\n` +
      `  hint: validate checks one document per file, and this one holds more, one per line (JSON lines?): give each its own file: split -l 1 ${lines} card- && a2a-registry validate card-*\n`,
  );
  const j = json(cli(['validate', '--json', '-'], readFileSync(lines, 'utf8')));
  assert.equal(j.results[0]!.error!.hint, 'validate checks one document per file, and this one holds more, one per line (JSON lines?): give each its own file');
  // Text after a value on its own line only: `{"a": 1} x` is a mistake in one document, no hint.
  assert.equal(json(cli(['validate', '--json', '-'], '{"a": 1} x\n')).results[0]!.error!.hint, undefined);
});

test('a file that cannot be read is a usage error: exit 2, even beside invalid files', () => {
  const dir = tempDir('a2a-registry-cli-');
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, '{"name": "x",');
  const r = cli(['validate', join(dir, 'missing.json'), bad]);
  assert.equal(r.code, 2);
  assert.match(r.stdout, /cannot read .*missing\.json: no such file/);
  assert.match(r.stdout, /bad\.json:1:14: not valid JSON: expected a property name/);
  const j = json(cli(['validate', '--json', join(dir, 'missing.json')]));
  assert.equal(j.results[0]!.error!.code, 'READ_ERROR');
  assert.equal(cli(['validate', dir]).code, 2, 'a directory');
});

test('a file over 1 MiB, more than any registry accepts, is refused by name after its first MiB: `validate /dev/zero` ends', () => {
  const dir = tempDir('a2a-registry-cli-');
  const big = join(dir, 'big.json');
  const padded = ' '.repeat(1024 * 1024) + readFileSync(card('Shiv33ndu__songgenerationa2a__agent-card.json'), 'utf8');
  writeFileSync(big, padded);
  const r = cli(['validate', '--json', big, '-'], padded);
  assert.equal(r.code, 1, r.stderr);
  const expected = (name: string) => `${name} is over 1,048,576 bytes (1 MiB), more than any registry accepts for a document (REGISTRY_MAX_DOCUMENT_BYTES at its highest); it was not read further: is it the right file?`;
  assert.deepEqual(json(r).results.map((x) => x.error), [
    { code: 'TOO_LARGE', message: expected(big) },
    { code: 'TOO_LARGE', message: expected('standard input') },
  ]);
  assert.match(cli(['validate', '/dev/zero']).stdout, /^✗ too large \/dev\/zero is over 1,048,576 bytes/);
  // A larger --max-bytes reads that much.
  const allowed = cli(['validate', '--json', '--max-bytes', '2000000', big]);
  assert.equal(allowed.code, 0, allowed.stdout);
});

test('usage errors exit 2; --help exits 0', () => {
  assert.equal(cli(['validate']).code, 2);
  assert.equal(cli(['validate', '--no-such-option', 'x.json']).code, 2);
  const badLimit = cli(['validate', '--max-bytes', 'ten', 'x.json']);
  assert.equal(badLimit.code, 2);
  assert.match(badLimit.stderr, /max-bytes/);
  const help = cli(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage: a2a-registry/);
  assert.match(help.stdout, /validate/);
  const validateHelp = cli(['validate', '--help']);
  assert.equal(validateHelp.code, 0);
  assert.match(validateHelp.stdout, /--max-bytes/);
});

test('the whole corpus through the CLI agrees with the verdict table', () => {
  const table = JSON.parse(readFileSync(new URL('./fixtures/corpus-verdicts.json', import.meta.url), 'utf8')) as {
    cards: Record<string, { verdict: string; errorCode?: string }>;
    toolspecs: Record<string, { verdict: string; errorCode?: string }>;
  };
  const files = [
    ...readdirSync(join(corpus, 'cards')).filter((f) => f.endsWith('.json')).map((f) => ['cards', f] as const),
    ...readdirSync(join(corpus, 'toolspecs')).filter((f) => f.endsWith('.json')).map((f) => ['toolspecs', f] as const),
  ];
  const r = cli(['validate', '--json', ...files.map(([kind, f]) => join(corpus, kind, f))]);
  assert.equal(r.code, 1);
  const results = json(r).results;
  assert.equal(results.length, files.length);
  files.forEach(([kind, f], i) => {
    const expected = table[kind][f]!;
    assert.equal(results[i]!.valid, expected.verdict === 'accept', f);
    assert.equal(results[i]!.errorCode, expected.errorCode, f);
  });
});
