/**
 * The `a2a-registry` command line, run as a user runs it (a child process: the built
 * bin/a2a-registry.js, rebuilt by test/support/built.ts when the sources are newer) against real registries on
 * 127.0.0.1: every command, its --json output, the exit code of each failure class, the
 * admin-token fallback, `serve`, and search results printed while the stream is still open.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SendMessageRequest, type AgentCard } from '@a2a-js/sdk';
import Database from 'better-sqlite3';
import { atRegistryUrl } from '../src/cli/client.js';
import { Table, styles, typedArgumentsAt, type Output } from '../src/cli/output.js';
import { oneLine, resolveConnection } from '../src/cli/connection.js';
import { buildProgram } from '../src/cli/main.js';
import { searchArguments } from '../src/cli/commands/search.js';
import { nameFlags } from '../src/cli/commands/serve.js';
import { grpcBindError } from '../src/grpc/bind-error.js';
import { backupCommand } from '../src/cli/commands/backup.js';
import { restoreCommand } from '../src/cli/commands/restore.js';
import { backupSqlite, restoreSqlite } from '../src/storage/sqlite/backup.js';
import { swapIntoPlace } from '../src/storage/sqlite/restore-swap.js';
import { loadConfig, loadStorageLocation } from '../src/config/config.js';
import { BIN, ensureBuilt } from './support/built.js';
import { loadedModules, recordingLoadedModules, serverModules } from './support/loaded-modules.js';
import { TOKENS, REPO_ROOT, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';
import { op, resultOf, sdkClient, stateOf, errorOf } from './support/client.js';
import { v1Card } from './support/documents.js';
import { selfSignedCertificate, startOrigin } from './support/origin-server.js';
import { freePort } from './support/ports.js';
import { eventually } from './support/eventually.js';
import { actor, entryWrite } from './support/store-fixtures.js';
import { createStore } from '../src/storage/create-store.js';
import { serveCard } from './support/freshness.js';

const EXAMPLES = path.join(REPO_ROOT, 'examples');
const example = (f: string): string => path.join(EXAMPLES, f);
const exampleJson = (f: string): unknown => JSON.parse(fs.readFileSync(example(f), 'utf8'));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface RunOptions {
  env?: Record<string, string>;
  input?: string;
  /** Called with each piece of stdout as it arrives. */
  onStdout?: (chunk: string) => void;
  /** Run as this user (and its group): another user than the test's, as an operator may be. */
  uid?: number;
  /** Sent SIGTERM once what it wrote to stdout so far matches (a server that waits, e.g. for its database). */
  stopWhen?: RegExp;
  /** The working directory (default the repository's root). */
  cwd?: string;
}

/** An empty data directory: the CLI finds no admin-token file in it. */
let noDataDir: string | undefined;

/** A clean environment: no registry settings inherited from the developer's shell, no admin-token file. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('A2A_REGISTRY_') && k !== 'NO_COLOR' && k !== 'REGISTRY_DATA_DIR') env[k] = v;
  }
  env.REGISTRY_DATA_DIR = noDataDir ??= tempDir('a2a-registry-cli-nodata-');
  return env;
}

/** Runs the CLI asynchronously: the registry under test runs in this process and must keep serving. */
function cli(args: string[], options: RunOptions = {}): Promise<Run> {
  ensureBuilt();
  const asUser = options.uid === undefined ? {} : { uid: options.uid, gid: options.uid };
  const child = spawn(process.execPath, [path.join(REPO_ROOT, BIN), ...args], { cwd: options.cwd ?? REPO_ROOT, env: { ...baseEnv(), ...options.env }, stdio: 'pipe', ...asUser });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    options.onStdout?.(d);
    if (options.stopWhen?.test(stdout)) child.kill('SIGTERM');
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin.end(options.input ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/**
 * Runs a `backup` or `restore` and sends it `signal` once its temporary copy appears in `dir`
 * (created before the copy starts); resolves with how it ended.
 */
function interruptWhenCopying(args: string[], dir: string, signal: NodeJS.Signals, env: Record<string, string>): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  ensureBuilt();
  const watcher = fs.watch(dir);
  const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  watcher.on('change', (_event, name) => {
    if (String(name).endsWith('.tmp')) child.kill(signal);
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('close', (code, ended) => {
      clearTimeout(timer);
      watcher.close();
      resolve({ code, signal: ended, stderr });
    }),
  );
}

const parse = <T = Record<string, any>>(run: Run): T => {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  }
};

/** What a terminal obeys: C0 controls but the newline, DEL, C1 controls, bidi overrides and isolates. */
const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Runs the CLI on a pseudo-terminal (script(1)), as a person at a terminal does: stdout is a TTY, so colour is on. */
function onTerminal(args: string[], env: Record<string, string>): Promise<string> {
  ensureBuilt();
  const command = [process.execPath, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('/usr/bin/script', ['-qec', command, '/dev/null'], { cwd: REPO_ROOT, env: { ...baseEnv(), ...env, TERM: 'xterm' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('close', () => {
      clearTimeout(timer);
      resolve(output);
    }),
  );
}

/** No stack trace, ever: one line of message at most for failures. */
function assertNoStack(run: Run): void {
  assert.doesNotMatch(run.stderr, /^\s+at .+\(.+:\d+:\d+\)$/m, run.stderr);
}

describe('a2a-registry against a registry', () => {
  let registry: TestRegistry;
  let env: Record<string, string>;
  const as = (who: keyof typeof TOKENS): Record<string, string> => ({ ...env, A2A_REGISTRY_TOKEN: TOKENS[who] });
  const ids: Record<string, string> = {};

  before(async () => {
    registry = await startTestRegistry();
    env = { A2A_REGISTRY_URL: registry.url };
  });
  after(() => registry.close());

  /**
   * Runs the CLI with a loader hook in its process that lists the modules it loaded
   * (support/loaded-modules.ts; each run writes its own list, so runs can go at once).
   */
  const modulesDir = tempDir('a2a-registry-cli-modules-');
  let listings = 0;
  const withLoaded = async (args: string[]): Promise<{ run: Run; loaded: string[] }> => {
    const listing = path.join(modulesDir, `loaded-${++listings}.txt`);
    const run = await cli(args, { env: { NODE_OPTIONS: recordingLoadedModules(listing) } });
    return { run, loaded: run.code === 0 ? loadedModules(listing) : [] };
  };
  // The full help (every command's module, about 0.6 s of CPU a run) is run once for the two tests that read it.
  let fullHelp: Promise<{ run: Run; loaded: string[] }> | undefined;
  const fullHelpRun = (): Promise<{ run: Run; loaded: string[] }> => (fullHelp ??= withLoaded(['--help']));

  test('a command loads only what it runs: `get` neither the server, the storage engines nor the configuration schema', async () => {
    // Loading every command's module cost each invocation about 0.6 s of CPU more than the one
    // it runs. A loader hook in the CLI's process lists the modules it loaded.
    const loaded = async (run: Promise<{ run: Run; loaded: string[] }>): Promise<string[]> => {
      const done = await run;
      assert.equal(done.run.code, 0, done.run.stderr);
      return done.loaded;
    };
    const [get, register, list, all, helpGet, verify] = await Promise.all([
      loaded(withLoaded(['--token', 'some-token', 'get', '--help'])),
      loaded(withLoaded(['register', '--help'])),
      loaded(withLoaded(['list', '--help'])),
      loaded(fullHelpRun()),
      loaded(withLoaded(['help', 'get'])),
      loaded(withLoaded(['verify', '--help'])),
    ]);
    // `help get` as `get --help`: its command alone (it loaded all of them).
    assert.deepEqual(helpGet.filter((u) => u.includes('/dist/src/cli/commands/')), get.filter((u) => u.includes('/dist/src/cli/commands/')));
    assert.ok(get.some((u) => u.endsWith('/dist/src/cli/commands/get.js')), 'the command itself is loaded');
    // Nor the A2A client (the SDK and jose, 60 ms), which a command loads when it connects.
    for (const unwanted of ['/dist/src/cli/commands/serve.js', '/dist/src/server.js', '/node_modules/zod/', '/node_modules/better-sqlite3/', '/node_modules/pg/', '/node_modules/ajv/', '/node_modules/jose/', '/node_modules/@a2a-js/']) {
      assert.ok(!get.some((u) => u.includes(unwanted)), `get --help loaded ${unwanted}`);
    }
    // `register` leaves the checks to the registry: not the validator (ajv and the schemas, 0.1 s to load).
    assert.ok(register.some((u) => u.endsWith('/dist/src/cli/commands/register.js')));
    assert.ok(!register.some((u) => u.includes('/node_modules/ajv/')), 'register --help loaded ajv');
    // `verify` reads a card's version numbers, not the server's HTTP handlers: it loaded express
    // (about 0.2 s of CPU a run) through the module of the protocol's version negotiation.
    assert.ok(verify.some((u) => u.endsWith('/dist/src/cli/commands/verify.js')));
    for (const unwanted of ['/node_modules/express/', '/dist/src/http/']) assert.ok(!verify.some((u) => u.includes(unwanted)), `verify --help loaded ${unwanted}`);
    // An alias loads its command; no command named loads them all, for the full help.
    assert.ok(list.some((u) => u.endsWith('/dist/src/cli/commands/ls.js')));
    assert.ok(all.filter((u) => u.includes('/dist/src/cli/commands/')).length >= 16);
  });

  test('help <a name no command has> says so and suggests the nearest, as the name alone does (it printed the whole help, exit 2, without a word on it)', async () => {
    const [help, alone, known, alias] = await Promise.all([cli(['help', 'serach']), cli(['serach']), cli(['help', 'search']), cli(['--timeout', '5', 'help', 'list'])]);
    assert.equal(help.code, 2);
    assert.match(help.stderr, /^error: unknown command 'serach'\n\(Did you mean search\?\)\n/);
    assert.deepEqual([help.stdout, help.stderr], [alone.stdout, alone.stderr]);
    assert.equal(known.code, 0, known.stderr);
    assert.match(known.stdout, /^Usage: a2a-registry search /);
    assert.equal(alias.code, 0, alias.stderr);
    assert.match(alias.stdout, /^Usage: a2a-registry ls\|list /);
  });

  test('--help lists every command, and every command has its own --help', async () => {
    const [{ run: help }, searchHelp] = await Promise.all([fullHelpRun(), cli(['search', '--help'])]);
    assert.equal(help.code, 0);
    for (const c of ['serve', 'validate', 'register', 'search', 'get', 'ls', 'rm', 'refresh', 'import']) assert.match(help.stdout, new RegExp(`^  ${c}\\b`, 'm'), c);
    assert.match(help.stdout, /--registry <url> [^-]*env: A2A_REGISTRY_URL/);
    assert.equal(searchHelp.code, 0);
    assert.match(searchHelp.stdout, /--protocol-version <version>/);
    // The rest in-process: each command's help, as `<command> --help` prints it.
    const helps = new Map((await buildProgram()).commands.map((c) => [c.name(), c.helpInformation()]));
    assert.match(helps.get('serve')!, /--data-dir <dir>/);
    assert.match(helps.get('register')!, /--mcp-url <url>/);
    assert.match(helps.get('get')!, /--revision <n>/);
    assert.match(helps.get('ls')!, /--mine/);
    // Its order said as it is: "newest first" beside an UPDATED column read as most recently updated first.
    assert.match(helps.get('ls')!, /list entries, newest registered first/);
    assert.match(helps.get('rm')!, /Usage: a2a-registry rm\|unregister \[options\] <id>/);
    // A command that talks to a registry says how to name it and its token (search --help did not);
    // an offline one does not list options it ignores.
    for (const name of ['register', 'search', 'watch', 'get', 'ls', 'rm', 'refresh']) {
      assert.match(helps.get(name)!, /Global Options:[\s\S]*--registry <url>[\s\S]*env: A2A_REGISTRY_URL[\s\S]*--token <token>[\s\S]*--timeout <seconds>[\s\S]*\(default: 30\)/, name);
    }
    for (const name of ['serve', 'validate', 'import', 'backup', 'restore', 'check', 'migrate', 'keygen', 'sign', 'verify']) assert.doesNotMatch(helps.get(name)!, /--registry/, name);
    // Every command's whole help (its text after the options too) says its exit status: watch's did not;
    // 0 first: serve's said only 2 and 1, not the 0 of a stop asked for by a signal.
    const program = await buildProgram();
    for (const command of program.commands) {
      let shown = '';
      command.configureOutput({ writeOut: (text) => (shown += text) }).outputHelp();
      assert.match(shown, /\nExit status: 0\b/, command.name());
      // A command that says how Ctrl-C ends it says the other signals it handles alike (interruption.ts): SIGHUP was left out.
      if (/\b130\b/.test(shown)) assert.match(shown, /\b143\b[\s\S]*\b129\b|\b129\b[\s\S]*\b143\b/, `${command.name()}: 130 for Ctrl-C, but not 143 and 129`);
    }
    // The README's Command line section documents every command, under each of its names (`list`,
    // `unregister` were in no document), and every option a command's help shows.
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('\n## Command line\n');
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    const firstCells = [...section.matchAll(/^\| ((?:[^|\\]|\\.)+) \|/gm)].map((m) => m[1]!); // `\|` inside a cell is no column
    const undocumented: string[] = [];
    for (const command of program.commands) {
      for (const name of [command.name(), ...command.aliases()]) {
        if (!firstCells.some((cell) => new RegExp(`\`${name}\\b`).test(cell))) undocumented.push(`command ${name}`);
      }
      const shownOptions = command.options.filter((o) => !o.hidden && o.long !== undefined && o.long !== '--json'); // "Every command takes --json"
      for (const option of shownOptions) if (!section.includes(option.long!)) undocumented.push(`${command.name()} ${option.long}`);
    }
    assert.deepEqual(undocumented, [], "commands and options the README's Command line section does not name");
  });

  test('register: an example v1.0 card, then the same again (unchanged), human and --json', async () => {
    const first = await cli(['register', example('agent-card.json')], { env: as('alice') });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /✓ registered agent "Invoice Assistant" \(A2A 1\.0\)/);
    const id = /id +([0-9a-f-]{36})/.exec(first.stdout)?.[1];
    assert.ok(id, first.stdout);
    ids.invoice = id;
    assert.match(first.stdout, /revision +1\n/);
    assert.match(first.stdout, /indexed +3 skills\n/);
    assert.ok(first.stdout.includes(`warning ${example('agent-card.json')}:5:7  /supportedInterfaces/0/url: `), first.stdout);
    assert.match(first.stdout, /\/supportedInterfaces\/0\/url: .*placeholder/);
    assert.ok(!first.stdout.includes('\u001b['), 'no colour when stdout is not a TTY');

    const again = await cli(['register', '--json', example('agent-card.json')], { env: as('alice') });
    assert.equal(again.code, 0, again.stderr);
    const result = parse(again);
    assert.deepEqual([result.id, result.revision, result.created, result.changed], [id, 1, false, false]);
    assert.ok(Array.isArray(result.warnings));
  });

  test('register: a v0.3 card and an MCP toolspec with its server; an update bumps the revision', async () => {
    const [v03, mcp] = await Promise.all([
      cli(['register', '--json', example('agent-card-v0.3.json')], { env: as('bob') }),
      cli(['register', '--json', example('toolspec.json'), '--mcp-name', 'workspace-files', '--mcp-url', 'https://mcp.example.com/files/mcp', '--mcp-description', 'Files in a shared workspace', '--mcp-version', '1.0.0'], { env: as('alice') }),
    ]);
    assert.equal(v03.code, 0, v03.stderr);
    assert.deepEqual([parse(v03).kind, parse(v03).protocolVersion, parse(v03).created], ['agent', '0.3', true]);
    ids.weather = parse(v03).id;
    assert.equal(mcp.code, 0, mcp.stderr);
    assert.deepEqual([parse(mcp).kind, parse(mcp).indexed], ['mcp-server', { tools: 3 }]);
    ids.files = parse(mcp).id;

    // The document `get --document` prints registers again as it is; an --mcp-* option overrides it.
    const doc = await cli(['get', '--document', ids.files!], { env });
    assert.equal(doc.code, 0, doc.stderr);
    const file = path.join(tempDir(), 'mcp.json');
    fs.writeFileSync(file, doc.stdout);
    const updated = await cli(['register', file, '--mcp-version', '1.0.1'], { env: as('alice') });
    assert.equal(updated.code, 0, updated.stderr);
    assert.match(updated.stdout, /✓ updated MCP server "workspace-files"/);
    assert.match(updated.stdout, /revision +2/);
    // The document's own URL is at its place in the file (a placeholder warning).
    assert.match(updated.stdout, new RegExp(`warning ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+  /mcpServer/url: `));

    // A value an option gave over the document's is named at the option, not at the document's line and column, as validate names it.
    const [overText, overJson, toolspecText, empty, validated] = await Promise.all([
      cli(['register', '--dry-run', file, '--mcp-url', 'notaurl'], { env: as('alice') }),
      cli(['register', '--dry-run', '--json', file, '--mcp-url', 'notaurl'], { env: as('alice') }),
      cli(['register', '--dry-run', example('toolspec.json'), '--mcp-name', 'files', '--mcp-url', 'notaurl'], { env: as('alice') }),
      cli(['register', '--dry-run', file, '--mcp-url', ''], { env: as('alice') }),
      cli(['validate', file, '--mcp-url', 'notaurl']),
    ]);
    for (const r of [overText, toolspecText]) {
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^ {2}error {3}--mcp-url: must be an absolute http\(s\) URL; found "notaurl" \[pattern\]$/m);
      assert.match(r.stderr, /not valid \(1 error\)\. --mcp-url: must be/);
      assert.doesNotMatch(r.stderr, /\.json:\d+:\d+|\/mcpServer\/url/);
    }
    assert.deepEqual(parse(overJson).error.details.map((d: { path: string; location?: unknown }) => [d.path, d.location]), [['--mcp-url', undefined]]);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /option '--mcp-url <url>' argument '' is invalid\. must not be empty/);
    assert.equal(validated.code, 1, 'validate lays the option over the document as register does');
    assert.match(validated.stdout, /^ {2}error {3}--mcp-url: must be an absolute http\(s\) URL; found "notaurl" \[pattern\]$/m);
  });

  test('register --dry-run checks on the registry and stores nothing; stdin with "-"', async () => {
    const card = JSON.stringify(v1Card('Dry Run Agent', 'https://dry-run.example.org/a2a'));
    const dry = await cli(['register', '--dry-run', '--json', '-'], { env: as('alice'), input: card });
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(parse(dry).valid, true);
    const found = await cli(['search', '--json', 'Dry Run Agent'], { env });
    assert.equal(parse(found).results.some((h: { name: string }) => h.name === 'Dry Run Agent'), false);
  });

  test('search: a table as results arrive, --json page, filters', async () => {
    const table = await cli(['search', 'invoice'], { env });
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^NAME +KIND +MATCHED +ID +ENDPOINT$/);
    assert.match(lines[1]!, /^Invoice Assistant +agent +\S.* +[0-9a-f-]{36} +https:\/\/invoices\.example\.com\/a2a\/jsonrpc$/);
    assert.match(table.stdout, /skill "(Translate|Extract) invoice"/);
    assert.match(lines.at(-1)!, /^1 entry shown; 1 match in all\.$/);

    const [json, mcp, tagged, none, noWord] = await Promise.all([
      cli(['search', '--json', 'weather', 'forecast'], { env }),
      cli(['search', '--json', '--kind', 'mcp-server', '--read-only', 'file'], { env }),
      cli(['search', '--json', '--tag', 'tax', '--tag', 'alerts', '--limit', '10'], { env }),
      cli(['search', 'zzqxnothingmatches'], { env }),
      cli(['search', 'the'], { env }),
    ]);
    const page = parse(json);
    assert.equal(page.results[0].id, ids.weather);
    assert.equal(typeof page.total, 'number');
    assert.equal(parse(mcp).results.length > 0, true);
    for (const hit of parse(mcp).results) assert.deepEqual([hit.kind, hit.match.type], ['mcp-server', 'tool']);
    assert.ok(parse(mcp).results.every((h: { match: { name: string } }) => h.match.name !== 'write_file'), 'write_file is not read-only');
    assert.deepEqual(new Set(parse(tagged).results.map((h: { match: { id: string } }) => h.match.id)), new Set(['check-vat', 'alerts']));
    assert.equal(none.code, 0);
    assert.match(none.stdout, /^No matches\.$/m);
    assert.match(noWord.stdout, /^No matches: the query has no word search looks for: "the" is only words too common or too short to search/m, 'and why, when the query has no word to look for');
  });

  test('search and watch take the query syntax\'s -word exclusion as words (it was "unknown option \'-storm\'", exit 2); options around it still count', async () => {
    const [dashed, separated, withNot, optionsAfter, optionsAfterSeparated, tagValue, tagValueJoined, help, weatherAlone, searchStation, watchStation, unknown] = await Promise.all([
      cli(['search', '--json', 'weather', '-storm'], { env }),
      cli(['search', '--json', '--', 'weather', '-storm'], { env }),
      cli(['search', '--json', 'weather', 'NOT', 'storm'], { env }),
      cli(['search', '-storm', '--json', '--kind', 'agent', 'weather'], { env }),
      cli(['search', '--json', '--kind', 'agent', '--', '-storm', 'weather'], { env }),
      // An option's value stays its value, a dash or not.
      cli(['search', '--json', '--tag', '-storm', 'weather'], { env }),
      cli(['search', '--json', '--tag=-storm', 'weather'], { env }),
      cli(['search', 'weather', '-h']),
      cli(['search', '--json', 'weather'], { env }),
      cli(['search', 'weather', '-station', '--kind', 'robot'], { env }),
      cli(['watch', 'weather', '-station', '--kind', 'robot'], { env }),
      cli(['search', 'weather', '--station'], { env }),
    ]);
    for (const r of [dashed, separated, withNot, optionsAfter, optionsAfterSeparated, tagValue, tagValueJoined]) assert.equal(r.code, 0, r.stderr);
    const idsOf = (r: Run): string[] => parse(r).results.map((h: { id: string }) => h.id);
    // The weather agent, without its alerts skill ("storm ... warnings"), which `weather` alone matches.
    assert.equal(parse(dashed).results[0].id, ids.weather);
    assert.ok(!JSON.stringify(parse(dashed).results[0]).includes('Severe weather alerts'), dashed.stdout);
    assert.ok(JSON.stringify(parse(weatherAlone).results[0]).includes('Severe weather alerts'));
    assert.deepEqual(idsOf(dashed), idsOf(separated));
    assert.deepEqual(idsOf(dashed), idsOf(withNot));
    assert.deepEqual(idsOf(optionsAfter), idsOf(optionsAfterSeparated));
    assert.deepEqual(idsOf(tagValue), idsOf(tagValueJoined));
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: a2a-registry search /);
    // The options after the word are read as options: here, a usage error of --kind's, not of the word.
    for (const [command, r] of [['search', searchStation], ['watch', watchStation]] as const) {
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^error: option '--kind <kind>' argument 'robot' is invalid/, command);
    }
    // An unknown --option is still one.
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^error: unknown option '--station'/);
  });

  test('get: readable, --json with the document exactly as registered, --revision', async () => {
    const [human, json, old, missing] = await Promise.all([
      cli(['get', ids.invoice!], { env }),
      cli(['get', '--json', ids.invoice!], { env }),
      cli(['get', '--json', '--revision', '1', ids.files!], { env }),
      cli(['get', 'no-such-entry'], { env }),
    ]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^Invoice Assistant \(agent, A2A 1\.0\)$/m);
    assert.match(human.stdout, /owner +alice/);
    assert.match(human.stdout, /interfaces +JSONRPC 1\.0 +https:\/\/invoices\.example\.com\/a2a\/jsonrpc/);
    assert.match(human.stdout, /Check VAT \(check-vat\) \[finance, tax, vat\]/);
    assert.equal(json.code, 0);
    assert.deepEqual(parse(json).document, exampleJson('agent-card.json'));
    assert.equal(parse(old).revision, 1);
    assert.equal(parse(old).document.mcpServer.version, '1.0.0');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /NOT_FOUND: No entry has id "no-such-entry"/);
  });

  test('ls: newest first, --kind, --owner, --mine resolved by the registry from the token', async () => {
    const [all, mine, bobs, agents, anonymousMine] = await Promise.all([
      cli(['ls', '--json'], { env }),
      cli(['ls', '--json', '--mine'], { env: as('alice') }),
      cli(['ls', '--owner', 'bob'], { env }),
      cli(['ls', '--json', '--kind', 'agent', '--limit', '1'], { env }),
      cli(['ls', '--mine'], { env }),
    ]);
    assert.equal(all.code, 0, all.stderr);
    const listed = parse(all).entries.map((e: { id: string }) => e.id);
    for (const id of [ids.invoice, ids.weather, ids.files]) assert.ok(listed.includes(id), id);
    assert.deepEqual(new Set(parse(mine).entries.map((e: { owner: string }) => e.owner)), new Set(['alice']));
    assert.equal(parse(mine).entries.length, 2);
    assert.match(bobs.stdout, /^NAME +KIND +OWNER +REV +UPDATED +ID$/m);
    assert.match(bobs.stdout, /^Weather Agent +agent +bob +1 /m);
    assert.doesNotMatch(bobs.stdout, /alice/);
    assert.equal(parse(agents).entries.length, 1);
    assert.equal(typeof parse(agents).nextPageToken, 'string');
    const next = await cli(['ls', '--json', '--kind', 'agent', '--limit', '1', '--page-token', parse(agents).nextPageToken], { env });
    assert.notEqual(parse(next).entries[0].id, parse(agents).entries[0].id);
    assert.equal(anonymousMine.code, 1);
    assert.match(anonymousMine.stderr, /UNAUTHENTICATED/);
    assert.match(anonymousMine.stderr, /--token or A2A_REGISTRY_TOKEN/);
  });

  test('rm: only the owner (or an admin); then the entry is gone', async () => {
    const forbidden = await cli(['rm', '--json', ids.weather!], { env: as('alice') });
    assert.equal(forbidden.code, 1);
    assert.equal(parse(forbidden).error.code, 'FORBIDDEN');
    // Typed in capitals (ids are matched in any case): it says the id the registry answered, the
    // stored lowercase one search, ls and watches show, not the id as typed.
    const removed = await cli(['rm', ids.weather!.toUpperCase()], { env: as('bob') });
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /✓ unregistered agent "Weather Agent"/);
    assert.ok(removed.stdout.includes(`(${ids.weather!}, revision 1)`), removed.stdout);
    const gone = await cli(['get', '--json', ids.weather!], { env });
    assert.equal(gone.code, 1);
    assert.equal(parse(gone).error.code, 'NOT_FOUND');
  });

  test('declined (exit 1): code, message, and each detail with its place in the user\'s file, path, message and hint', async () => {
    const file = path.join(tempDir(), 'broken-card.json');
    fs.writeFileSync(file, JSON.stringify({ name: 'Broken', supportedInterfaces: [{ url: 'https://broken.example.org/a2a', transport: 'jsonrpc' }], capabilities: [] }, null, 2));
    const [human, json, dry, anonymous] = await Promise.all([
      cli(['register', file], { env: as('alice') }),
      cli(['register', '--json', file], { env: as('alice') }),
      cli(['register', '--dry-run', file], { env: as('alice') }),
      cli(['register', example('agent-card.json')], { env }),
    ]);
    assert.equal(human.code, 1);
    assert.match(human.stderr, /declined VALIDATION_FAILED: /);
    // Line 4: the interface object that lacks the member; line 9: "capabilities": [].
    assert.ok(human.stderr.includes(`error   ${file}:4:5  /supportedInterfaces/0/protocolBinding: required field "protocolBinding" is missing`), human.stderr);
    assert.ok(human.stderr.includes(`error   ${file}:9:3  /capabilities: `), human.stderr);
    assert.match(human.stderr, /hint: Rename "transport" to "protocolBinding"/);
    assert.doesNotMatch(human.stderr, /agent-card\.json|\/parts\//, 'the user never named agent-card.json');
    assertNoStack(human);
    assert.equal(json.code, 1);
    const error = parse(json).error;
    assert.equal(error.code, 'VALIDATION_FAILED');
    assert.ok(error.details.some((d: { path: string; hint?: string }) => d.path === '/capabilities' && d.hint));
    assert.deepEqual(error.details.find((d: { path: string }) => d.path === '/capabilities').location, { file, line: 9, column: 3 });
    // A dry run of the same card fails the same way (exit 1), storing nothing.
    assert.equal(dry.code, 1, dry.stdout + dry.stderr);
    assert.match(dry.stdout + dry.stderr, /\/supportedInterfaces\/0\/protocolBinding: required field "protocolBinding" is missing/);
    assert.equal(anonymous.code, 1);
    assert.match(anonymous.stderr, /UNAUTHENTICATED/);
  });

  test('a refusal of what the user typed names the option or argument (--page-token, <id>, [words...]), never the request\'s /parts/0/data/... path, in text and --json', async () => {
    const [lsText, lsJson, searchText, searchJson, longId, longQuery, both] = await Promise.all([
      cli(['ls', '--page-token', 'garbage'], { env }),
      cli(['ls', '--json', '--page-token', 'garbage'], { env }),
      cli(['search', 'weather', '--page-token', 'garbage'], { env }),
      cli(['search', 'weather', '--json', '--page-token', 'garbage'], { env }),
      cli(['get', 'x'.repeat(300)], { env }),
      cli(['search', 'y'.repeat(3000), '--json'], { env }),
      cli(['ls', '--mine', '--owner', 'x'], { env: as('alice') }),
    ]);
    for (const r of [lsText, searchText]) {
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^ {2}error {3}--page-token: not a token this registry issued \[page-token-invalid\]$/m);
    }
    for (const r of [lsJson, searchJson]) assert.deepEqual(parse(r).error.details.map((d: { path: string }) => d.path), ['--page-token']);
    // The registry's message names the path too ("... are not valid: /parts/0/data/get/id: ...").
    assert.match(longId.stderr, /The "get" arguments are not valid: <id>: "id" must be a string of 1 to 100 characters; got one longer/);
    assert.match(longId.stderr, /^ {2}error {3}<id>: "id" must be a string of 1 to 100 characters; got one longer/m);
    assert.deepEqual(parse(longQuery).error.details.map((d: { path: string }) => d.path), ['[words...]']);
    assert.match(parse(longQuery).error.message, /not valid: \[words\.\.\.\]: the query is 3000 characters/);
    for (const r of [lsText, lsJson, searchText, searchJson, longId, longQuery]) assert.doesNotMatch(r.stdout + r.stderr, /\/parts\/|\/data\//);
    // --mine beside --owner never reaches the registry; were it refused there, it is at the option.
    assert.equal(both.code, 2);
    assert.match(both.stderr, /option '--mine' cannot be used with option '--owner <principal>'/);
    const ls = typedArgumentsAt({ operation: 'list', from: { '/filter/owner': '--owner', '/filter/mine': '--mine', '/filter': '(filter)' } });
    assert.deepEqual(ls('/parts/0/data/list/filter/owner'), { typed: '--owner' });
    assert.deepEqual(ls('/parts/2/data/list/filter/mine'), { typed: '--mine' });
    assert.deepEqual(ls('/parts/0/data/list/filter/kind/x'), { typed: '(filter)' });
    for (const other of ['/parts/0/data/lists/filter/owner', '/parts/0/data/search/filter/owner', '/filter/owner', '/parts/0/raw']) assert.equal(ls(other), undefined, other);
    // Nor does this registry refuse a streaming filter the CLI sends (a boolean; a contradiction,
    // --no-streaming --kind agent --read-only, matches nothing); another's refusal of it names the
    // option typed, not "--streaming/--no-streaming".
    const streaming = (o: { streaming: boolean }) => typedArgumentsAt(searchArguments({ json: false, ...o }))('/parts/0/data/search/filter/streaming');
    assert.deepEqual(streaming({ streaming: false }), { typed: '--no-streaming' });
    assert.deepEqual(streaming({ streaming: true }), { typed: '--streaming' });
  });

  test('usage errors (exit 2), commander\'s and the CLI\'s own', async () => {
    // Started beside the others; read below.
    const credentialRuns = Promise.all([
      cli(['ls', '--json', '--registry', 'ftp://user:Hunter2pw@registry.example.com'], { env }),
      cli(['ls', '--registry', 'user:Hunter2pw@registry.example.com'], { env }),
      // A command's option before its name: "unknown option '--json'" alone, as if no command took it.
      cli(['--json', 'ls'], { env }),
      // ...and one that takes a value: its value was taken for the command's name, and no hint given.
      cli(['--limit', '3', 'ls'], { env }),
      // ...typed with its value as --limit=3: the hint suggested `ls --limit ...`, the 3 lost.
      cli(['--limit=3', 'ls'], { env }),
      // As other tools print their version: -v is no option here, and `version` was "Did you mean verify?" alone.
      cli(['-v']),
      cli(['version']),
      // A bound no user has (Number.MAX_SAFE_INTEGER): "must be from 1 to 9007199254740991".
      cli(['get', 'x', '--revision', '0'], { env }),
      // ...with another option before it: commander named only that one ("unknown option '--json'"), no hint.
      cli(['--json', '-v']),
      cli(['--json', 'version']),
    ]);
    const runs = await Promise.all([
      cli(['search', '--no-such-option'], { env }),
      cli(['search', '--limit', '0', 'x'], { env }),
      cli(['search', '--kind', 'robot', 'x'], { env }),
      cli(['get'], { env }),
      cli(['ls', '--mine', '--owner', 'bob'], { env }),
      cli(['register', example('toolspec.json')], { env: as('alice') }),
      cli(['register', example('toolspec.json'), '--mcp-name', 'files'], { env: as('alice') }),
      cli(['search', 'x', '--registry', 'not a url'], { env }),
      // `A2A_REGISTRY_URL=$STAGING_URL` unset: it went to the registry on this machine instead.
      cli(['ls'], { env: { ...env, A2A_REGISTRY_URL: '' } }),
      cli(['serve', '--port', 'eighty']),
      cli(['serve', '--grpc-port', '70000']),
      cli(['nonsense']),
      // Below the documented minimum of 0.1 s: 0.05 was accepted (the check was `> 0`).
      cli(['search', 'x', '--timeout', '0.05'], { env }),
      // What commander quotes back reached the terminal raw: this one cleared the screen.
      cli(['search', '--limit', '\u001b[2J\u001b]0;title\u0007', 'x'], { env }),
      // An agent card with a toolspec's --mcp-* options was sent as a toolspec: declined, "/toolspec/tools ... missing".
      cli(['register', example('agent-card.json'), '--mcp-name', 'files', '--mcp-url', 'https://files.example.org/mcp'], { env: as('alice') }),
      // A principal with whitespace at an end, which no token's principal has (they are trimmed):
      // import created entries no token could own, ls listed none.
      cli(['import', '--owner', 'acme ', '--data-dir', tempDir(), '-'], { input: '{}\n' }),
      cli(['ls', '--owner', ' bob'], { env }),
      // Nor can a principal hold REGISTRY_TOKENS' separators.
      cli(['import', '--owner', 'acme:ops', '--data-dir', tempDir(), '-'], { input: '{}\n' }),
      // Empty values (`--owner "$OWNER"` with the variable unset): ls listed every owner's
      // entries, search dropped the filter, get and rm sent the registry an empty id.
      cli(['ls', '--owner', '', '--json'], { env }),
      cli(['search', '--binding', '', 'x'], { env }),
      cli(['get', ''], { env }),
      cli(['rm', ' '], { env: as('alice') }),
      cli(['register', '--url', ''], { env: as('alice') }),
      // And a storage command's --data-dir: it fell back to ./data, another registry's database.
      cli(['backup', path.join(tempDir(), 'copy.db'), '--data-dir', '']),
    ]);
    for (const r of runs) {
      assert.equal(r.code, 2, r.stderr);
      assertNoStack(r);
    }
    assert.match(runs[5]!.stderr, /--mcp-name <name> and --mcp-url <url>/);
    assert.match(runs[8]!.stderr, /^a2a-registry: --registry \(or A2A_REGISTRY_URL\) is empty: an unset shell variable\?/);
    assert.equal(runs[13]!.stderr.split('\n')[0], "error: option '--limit <n>' argument '\\u001b[2J\\u001b]0;title\\u0007' is invalid. must be a whole number from 1 to 100");
    for (const r of runs) assert.doesNotMatch(r.stderr, TERMINAL_CONTROL);
    assert.equal(runs[14]!.stderr, `a2a-registry: ${example('agent-card.json')} is an A2A agent card, and --mcp-name and --mcp-url give an MCP toolspec its server: leave them out to register the card, or give the toolspec's file\n`);
    assert.match(runs[12]!.stderr, /option '--timeout <seconds>' argument '0\.05' is invalid\. must be a number of seconds from 0\.1 to 3600/);
    assert.equal(runs[15]!.stderr.split('\n')[0], `error: option '--owner <principal>' argument 'acme ' is invalid. "acme " begins or ends with whitespace, which no principal of REGISTRY_TOKENS has (they are trimmed; a quoting mistake?): remove it`);
    assert.match(runs[16]!.stderr, /^error: option '--owner <principal>' argument ' bob' is invalid\. " bob" begins or ends with whitespace/);
    assert.match(runs[17]!.stderr, /^error: option '--owner <principal>' argument 'acme:ops' is invalid\. "acme:ops" contains ":", which no principal of REGISTRY_TOKENS can/);
    for (const r of runs.slice(-6)) assert.match(r.stderr, /must not be empty/);
    assert.match(parse(runs.at(-6)!).error.message, /--owner <principal>.*must not be empty/);
    // A password in --registry is not shown (it was, in full, --json too): masked, or the value
    // left out where it is no URL with a password to mask (user:password@host parses as scheme "user").
    const credentials = await credentialRuns;
    for (const r of credentials) {
      assert.equal(r.code, 2, r.stderr);
      assert.doesNotMatch(r.stdout + r.stderr, /Hunter2pw/);
    }
    assert.match(parse(credentials[0]!).error.message, /^--registry "ftp:\/\/user:\*\*\*@registry\.example\.com\/?" must be an http:\/\/ or https:\/\/ URL$/);
    assert.equal(credentials[1]!.stderr, 'a2a-registry: --registry must be an http:// or https:// URL\n');
    assert.equal(credentials[2]!.stderr, "error: unknown option '--json'\n(run with --help for usage)\n(--json is an option of ls: put it after the command's name, as in a2a-registry ls --json ...)\n");
    assert.match(parse(credentials[2]!).error.message, /^unknown option '--json' \(--json is an option of ls: put it after/);
    assert.equal(credentials[3]!.stderr, "error: unknown option '--limit'\n(run with --help for usage)\n(--limit is an option of ls: put it after the command's name, as in a2a-registry ls --limit 3 ...)\n");
    assert.equal(credentials[4]!.stderr, "error: unknown option '--limit=3'\n(run with --help for usage)\n(--limit is an option of ls: put it after the command's name, as in a2a-registry ls --limit=3 ...)\n");
    assert.equal(credentials[5]!.stderr, "error: unknown option '-v'\n(run with --help for usage)\n(to print the version: a2a-registry --version, or -V)\n");
    assert.equal(credentials[6]!.stderr, "error: unknown command 'version'\n(Did you mean verify?)\n(run with --help for usage)\n(to print the version: a2a-registry --version, or -V)\n");
    assert.equal(credentials[7]!.stderr.split('\n')[0], "error: option '--revision <n>' argument '0' is invalid. must be a whole number from 1 up");
    for (const r of credentials.slice(8)) {
      assert.equal(r.stderr, "error: unknown option '--json'\n(run with --help for usage)\n(to print the version: a2a-registry --version, or -V)\n");
      assert.equal(parse(r).error.message, "unknown option '--json' (to print the version: a2a-registry --version, or -V)");
    }
  });

  test('register names the user\'s file: not JSON (exit 1, line and column, nothing sent), unreadable (exit 2), too large', async () => {
    const dir = tempDir();
    const malformed = path.join(dir, 'my-agent.json');
    fs.writeFileSync(malformed, '{\n  "name": "Broken",\n  "skills": [\n    {"id": "a",}\n  ]\n}\n');
    const missing = path.join(dir, 'no-such-card.json');
    const large = path.join(REPO_ROOT, 'test/fixtures/corpus/toolspecs/tavily.json');
    // Over the registry's request limit (64 KiB): refused at its door, which closes the
    // connection unread, so the CLI may see either that answer or the connection cut mid-send.
    const huge = path.join(dir, 'huge-card.json');
    fs.writeFileSync(huge, JSON.stringify({ ...(exampleJson('agent-card.json') as object), description: 'x'.repeat(300_000) }));
    // Over 1 MiB, more than any registry takes: not read further (`register /dev/zero` ran out of memory), nothing sent.
    const overAnyLimit = ' '.repeat(1024 * 1024) + fs.readFileSync(example('agent-card.json'), 'utf8');
    const [notJson, notJsonAsJson, unreadable, unreadableAsJson, directory, tooLarge, overLimit, overLimitAsJson, overAny, overAnyAsJson] = await Promise.all([
      cli(['register', malformed], { env: as('alice') }),
      cli(['register', '--json', malformed], { env: as('alice') }),
      cli(['register', missing], { env: as('alice') }),
      cli(['register', '--json', missing], { env: as('alice') }),
      cli(['register', dir], { env: as('alice') }),
      cli(['register', large, '--mcp-name', 'tavily', '--mcp-url', 'https://mcp.tavily.example.com/mcp'], { env: as('alice') }),
      cli(['register', huge], { env: as('alice') }),
      cli(['register', '--json', huge], { env: as('alice') }),
      cli(['register', '/dev/zero'], { env: as('alice') }),
      cli(['register', '--json', '-'], { env: as('alice'), input: overAnyLimit }),
    ]);
    assert.equal(overAny.code, 1, overAny.stderr);
    assert.equal(overAny.stderr, 'a2a-registry: /dev/zero is over 1,048,576 bytes (1 MiB), more than any registry accepts for a document (REGISTRY_MAX_DOCUMENT_BYTES at its highest); it was not read further: is it the right file?\n');
    assert.equal(overAnyAsJson.code, 1, overAnyAsJson.stderr);
    assert.equal(parse(overAnyAsJson).error.code, 'TOO_LARGE');
    assert.match(parse(overAnyAsJson).error.message, /^standard input is over 1,048,576 bytes \(1 MiB\)/);
    assert.equal(notJson.code, 1);
    assert.equal(notJson.stderr, `a2a-registry: ${malformed}:4:16: not valid JSON: trailing comma (JSON allows none before } or ])\n`);
    assert.deepEqual(parse(notJsonAsJson).error.location, { file: malformed, line: 4, column: 16 });
    assert.equal(unreadable.code, 2);
    assert.equal(unreadable.stderr, `a2a-registry: cannot read ${missing}: no such file\n`);
    assert.deepEqual(parse(unreadableAsJson).error, { code: 'READ_ERROR', message: `cannot read ${missing}: no such file` });
    assert.equal(directory.code, 2);
    assert.match(directory.stderr, /is a directory/);
    assert.equal(tooLarge.code, 1);
    assert.ok(tooLarge.stderr.includes(`declined TOO_LARGE: The uploaded document "${large}" is `), tooLarge.stderr);
    assert.ok(tooLarge.stderr.includes(`error   ${large}  (document): `), tooLarge.stderr);
    assert.doesNotMatch(tooLarge.stderr, /toolspec\.json"|\/parts\//);
    // Not "the registry answered with an error" (exit 1) nor "cannot reach the registry: write EPIPE" (exit 3).
    assert.equal(overLimit.code, 1, overLimit.stderr);
    assert.ok(overLimit.stderr.startsWith(`declined TOO_LARGE: The document "${huge}" is ${fs.statSync(huge).size.toLocaleString('en-US')} bytes`), overLimit.stderr);
    assert.ok(overLimit.stderr.includes(`error   ${huge}  (document): `), overLimit.stderr);
    assert.match(overLimit.stderr, /REGISTRY_MAX_DOCUMENT_BYTES/);
    assert.equal(overLimitAsJson.code, 1, overLimitAsJson.stderr);
    assert.equal(parse(overLimitAsJson).error.code, 'TOO_LARGE');
    assert.deepEqual(parse(overLimitAsJson).error.details[0].location, { file: huge });
  });

  test('register refuses a file with a key given twice or a number JSON cannot hold before sending it (exit 1, line and column); a rounded number in a re-serialised toolspec is warned about', async () => {
    const dir = tempDir();
    const card = JSON.stringify(exampleJson('agent-card.json'), null, 2);
    const twice = path.join(dir, 'twice.json');
    fs.writeFileSync(twice, card.replace('{\n  "name"', '{\n  "name": "A",\n  "name"'));
    // A stored MCP document: its toolspec is sent re-serialised, where 1e400 would be null and a second "tools" gone.
    const doc = (maximum: string): string =>
      JSON.stringify({ mcpServer: { name: 'scale', url: 'https://mcp.acme-tools.io/scale' }, toolspec: { tools: [{ name: 'scale', description: 'Scales.', inputSchema: { type: 'object', properties: { n: { type: 'number', maximum: 7 } } } }] } }, null, 2).replace('"maximum": 7', `"maximum": ${maximum}`);
    const huge = path.join(dir, 'huge-mcp.json');
    fs.writeFileSync(huge, doc('1e400'));
    const long = path.join(dir, 'long-mcp.json');
    fs.writeFileSync(long, doc('12345678901234567890'));
    // Nothing is sent: no registry answers here, and none is needed to say so (it would be exit 3).
    const nowhere = { ...as('alice'), A2A_REGISTRY_URL: 'http://127.0.0.1:9' };
    const [twiceRun, twiceJson, hugeRun, longRun] = await Promise.all([
      cli(['register', twice], { env: nowhere }),
      cli(['register', '--json', twice], { env: nowhere }),
      cli(['register', huge], { env: nowhere }),
      cli(['register', long], { env: as('alice') }),
    ]);
    assert.equal(twiceRun.code, 1, twiceRun.stderr);
    assert.ok(twiceRun.stderr.startsWith(`a2a-registry: ${twice} was not sent: The agent card is not valid (1 error). /name: "name" is given twice in this object (also at line 2, column 3)`), twiceRun.stderr);
    assert.ok(twiceRun.stderr.includes(`error   ${twice}:3:3  /name: "name" is given twice in this object (also at line 2, column 3): a JSON reader keeps only one, and readers differ in which [duplicate-key]`), twiceRun.stderr);
    const error = parse(twiceJson).error;
    assert.equal(error.code, 'VALIDATION_FAILED');
    assert.deepEqual(error.details.map((d: { path: string; rule: string; location: unknown }) => [d.path, d.rule, d.location]), [['/name', 'duplicate-key', { file: twice, line: 3, column: 3 }]]);
    assert.equal(hugeRun.code, 1, hugeRun.stderr);
    assert.match(hugeRun.stderr, new RegExp(`error   ${huge}:16:\\d+  /toolspec/tools/0/inputSchema/properties/n/maximum: 1e400 is beyond the largest number JSON here can hold \\(about 1\\.8e308\\): write a smaller number or a string`));
    assert.equal(longRun.code, 0, longRun.stderr);
    assert.match(longRun.stdout, new RegExp(`warning ${long}:16:\\d+  /toolspec/tools/0/inputSchema/properties/n/maximum: 12345678901234567890 is read as 12345678901234567000`));
  });

  test('register refuses a misshapen MCP server document before sending it (exit 1), as validate and import say it: half of one (it went as a card: eight card findings), its tools beside its server (it asked for --mcp-* options, and with them stored the server in the toolspec)', async () => {
    const dir = tempDir();
    const server = { name: 'kiwi-files', url: 'https://kiwi.example.org/mcp' };
    const tools = [{ name: 'read', description: 'Reads a file.', inputSchema: { type: 'object' } }];
    const write = (name: string, doc: unknown): string => {
      fs.writeFileSync(path.join(dir, name), JSON.stringify(doc));
      return path.join(dir, name);
    };
    const serverOnly = write('server-only.json', { mcpServer: server });
    const toolspecOnly = write('toolspec-only.json', { toolspec: { tools } });
    const beside = write('beside.json', { mcpServer: server, tools });
    // Nothing is sent: no registry answers here (a request would be exit 3).
    const nowhere = { ...as('alice'), A2A_REGISTRY_URL: 'http://127.0.0.1:9' };
    const options = ['--mcp-name', 'files', '--mcp-url', 'https://mcp.example.com/mcp'];
    // With the --mcp-* options too: the file's shape is wrong whatever they give.
    const [serverRun, toolspecJson, besideRun] = await Promise.all([
      cli(['register', serverOnly], { env: nowhere }),
      cli(['register', '--json', toolspecOnly, ...options], { env: nowhere }),
      cli(['register', '--dry-run', beside, ...options], { env: nowhere }),
    ]);
    assert.equal(serverRun.code, 1, serverRun.stderr);
    assert.equal(
      serverRun.stderr,
      `a2a-registry: ${serverOnly} was not sent: An MCP server document needs both "mcpServer" and "toolspec"; this one has no "toolspec".\n` +
        `  error   ${serverOnly}:1:1  /toolspec: required field "toolspec" is missing [required]\n` +
        '          hint: Add the server\'s tools (its tools/list result): {"mcpServer": {...}, "toolspec": {"tools": [...]}}.\n',
    );
    assert.equal(toolspecJson.code, 1, toolspecJson.stderr);
    assert.deepEqual(parse(toolspecJson).error, {
      code: 'VALIDATION_FAILED',
      message: 'An MCP server document needs both "mcpServer" and "toolspec"; this one has no "mcpServer".',
      details: [
        {
          path: '/mcpServer',
          rule: 'required',
          message: 'required field "mcpServer" is missing',
          hint: 'Add the server whose tools these are: {"mcpServer": {"name": "files", "url": "https://mcp.example.com/mcp"}, "toolspec": {...}}.',
          location: { file: toolspecOnly, line: 1, column: 1 },
        },
      ],
    });
    const column = JSON.stringify({ mcpServer: server, tools }).indexOf('"tools"') + 1;
    assert.equal(besideRun.code, 1, besideRun.stderr);
    assert.equal(
      besideRun.stderr,
      `a2a-registry: ${beside} was not sent: An MCP server document keeps its tools under "toolspec"; this one has "tools" beside "mcpServer".\n` +
        `  error   ${beside}:1:${column}  /tools: "tools" belongs inside "toolspec" [misplaced]\n` +
        '          hint: Move it: {"mcpServer": {...}, "toolspec": {"tools": [...]}}.\n',
    );
  });

  test('--registry takes the base URL, an endpoint URL or the card URL', async () => {
    const forms = [registry.url, `${registry.url}/`, `${registry.url}/a2a/jsonrpc`, `${registry.url}/a2a/rest`, `${registry.url}/a2a/rest/message:send`, `${registry.url}/.well-known/agent-card.json`];
    const runs = await Promise.all(forms.map((url) => cli(['get', '--json', ids.invoice!, '--registry', url], { env: {} })));
    runs.forEach((r, i) => {
      assert.equal(r.code, 0, `${forms[i]}: ${r.stderr}`);
      assert.equal(parse(r).id, ids.invoice);
    });
    // And the connection resolves them to one base (a registry mounted under a prefix keeps it).
    for (const [given, base] of [
      ['https://r.example.com/a2a/jsonrpc', 'https://r.example.com'],
      ['https://r.example.com/.well-known/agent-card.json?x=1', 'https://r.example.com'],
      ['https://r.example.com/registry/a2a/rest', 'https://r.example.com/registry'],
      ['https://r.example.com/registry/', 'https://r.example.com/registry'],
      ['https://r.example.com/mcp', 'https://r.example.com'],
    ]) {
      assert.equal(resolveConnection({ registry: given }, {}).url, base, given);
    }
  });

  test('--timeout bounds the whole answer: a registry that stalls half way through a body (a streamed search, the card) is given up on', async () => {
    // The registry's own card, served whole or cut off half way; the JSON-RPC endpoint (where
    // the CLI sends its message, at the --registry URL) answers a stream's headers, then only
    // keep-alive comments, as a registry stuck behind its heartbeat does.
    const card = await (await fetch(`${registry.url}/.well-known/agent-card.json`)).text();
    const stalling = http.createServer((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(req.url?.startsWith('/card-stalls/') ? card.slice(0, card.length / 2) : card);
        if (!req.url?.startsWith('/card-stalls/')) res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 100);
      res.on('close', () => clearInterval(heartbeat));
    });
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(stalling.address() as AddressInfo).port}`;
    try {
      // 2 s, not less: within it the headers must arrive (a loaded machine took over 0.5 s once),
      // and only the body's end must not.
      const [search, get] = await Promise.all([
        cli(['search', 'x', '--registry', url, '--timeout', '2'], { env: {} }),
        cli(['get', 'x', '--json', '--registry', `${url}/card-stalls`, '--timeout', '2'], { env: {} }),
      ]);
      assert.equal(search.code, 3, search.stderr);
      assert.equal(search.stderr, `a2a-registry: cannot reach the registry at ${url}: the answer was not complete within 2 s\n`);
      assert.equal(get.code, 3, get.stderr);
      assert.equal(parse(get).error.code, 'UNREACHABLE');
      assert.match(get.stderr, /the answer was not complete within 2 s/);
    } finally {
      stalling.closeAllConnections();
      stalling.close();
    }
  });

  test('search: one row per entry, with every part of it that matched', async () => {
    // The invoice agent matches "invoice" by its own name and by two of its skills.
    const [table, json] = await Promise.all([cli(['search', 'invoice'], { env }), cli(['search', '--json', 'invoice'], { env })]);
    assert.equal(table.code, 0, table.stderr);
    const rows = table.stdout.split('\n').filter((line) => line.includes(ids.invoice!));
    assert.equal(rows.length, 1, table.stdout);
    const hits = parse(json).results.filter((h: { id: string }) => h.id === ids.invoice);
    assert.equal(hits.length, 1);
    const matched = [hits[0].match, ...(hits[0].matches ?? [])].map((m: { type: string; name: string }) => `${m.type}:${m.name}`);
    assert.ok(matched.includes('skill:Translate invoice'), matched.join());
    assert.equal(new Set(matched).size, matched.length, 'no match listed twice');
  });

  test('into a pipe, names and match lists are printed whole (the columns kept where they fit); on a terminal they are cut to the columns', async () => {
    const name = 'Pipefish Procurement And Purchase Order Reconciliation Agent';
    const card = {
      ...v1Card(name, 'https://pipefish.example.org/a2a'),
      skills: ['Reconcile pipefish orders', 'Match pipefish invoices', 'Flag pipefish duplicates'].map((n, i) => ({ id: `s${i}`, name: n, description: `${n}.`, tags: ['pipefish'] })),
    };
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    resultOf(await op(alice, { register: { agentCard: card } }));
    const [ls, search] = await Promise.all([cli(['ls', '--owner', 'alice'], { env }), cli(['search', 'pipefish'], { env })]);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stdout, new RegExp(`^${name}  agent +alice +1 `, 'm'), ls.stdout);
    assert.match(ls.stdout, /^Invoice Assistant +agent +alice +1 /m, 'shorter names still fill their column');
    assert.equal(search.code, 0, search.stderr);
    const row = search.stdout.split('\n').find((l) => l.startsWith(name));
    assert.ok(row, search.stdout);
    for (const skill of ['Reconcile pipefish orders', 'Match pipefish invoices', 'Flag pipefish duplicates']) assert.ok(row.includes(`skill "${skill}"`), row);
    assert.doesNotMatch(ls.stdout + search.stdout, /…/);
    // A person at a terminal still gets rows that fit its width.
    if (!fs.existsSync('/usr/bin/script')) return;
    const tty = await onTerminal([BIN, 'ls', '--owner', 'alice'], env);
    assert.match(tty, /\nPipefish Procurement And …  agent/);
    // Colour is each stream's own: `2>errors.log` from a terminal got stdout's escape sequences
    // in the log, and the failure of a `--json > out.json` left on the terminal had none.
    const logs = tempDir('a2a-registry-cli-colour-');
    const [errLog, outFile] = [path.join(logs, 'errors.log'), path.join(logs, 'out.json')];
    const get = `'${process.execPath}' '${BIN}' get no-such-entry`;
    const shown = await onTerminal(['-e', `require('node:child_process').execSync(${JSON.stringify(`${get} 2>'${errLog}'; ${get} --json >'${outFile}'; true`)}, { stdio: 'inherit' })`], env);
    assert.equal(fs.readFileSync(errLog, 'utf8'), 'declined NOT_FOUND: No entry has id "no-such-entry".\n');
    assert.equal(JSON.parse(fs.readFileSync(outFile, 'utf8')).error.code, 'NOT_FOUND');
    assert.match(shown, /\u001b\[31mdeclined\u001b\[0m/, 'on the terminal, in colour');
  });

  test('search pages: --limit entries a page, each entry on one page only, total in entries as on A2A', async () => {
    // Three agents whose every skill matches the word: asked per match, a page of 2 held two
    // skills of one agent (one row), and the next page showed that agent again.
    const card = (n: number) => ({
      ...v1Card(`Zebrafinch ${n}`, `https://zebrafinch-${n}.example.org/a2a`),
      skills: ['a', 'b', 'c'].map((s) => ({ id: s, name: `Zebrafinch song ${s}`, description: `Sings zebrafinch song ${s}.`, tags: ['zebrafinch'] })),
    });
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    for (const n of [1, 2, 3]) assert.equal(stateOf(await op(alice, { register: { agentCard: card(n) } })), 'TASK_STATE_COMPLETED');
    const a2a = resultOf(await op(alice, { search: { query: 'zebrafinch', limit: 100 } }));
    assert.equal(a2a.total, 3);

    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const run = await cli(['search', '--json', '--limit', '2', 'zebrafinch', ...(token ? ['--page-token', token] : [])], { env });
      assert.equal(run.code, 0, run.stderr);
      const page = parse(run);
      assert.equal(page.total, 3, 'total counts entries');
      assert.equal(page.results.length, pages === 0 ? 2 : 1, run.stdout);
      seen.push(...page.results.map((h: { id: string }) => h.id));
      token = page.nextPageToken;
      pages++;
    } while (token && pages < 5);
    assert.equal(pages, 2);
    assert.deepEqual(seen, a2a.results.map((h: { id: string }) => h.id), 'the same entries in the same order as A2A, each once');
  });

  test('text from the registry reaches the terminal with its control characters escaped, never raw', async () => {
    // Recolour, set the window title (OSC ... BEL), clear the screen, a one-character CSI (U+009B)
    // and a bidi override that reorders the rest of the line. The registry refuses such a name
    // now (VALIDATION_FAILED), but entries stored before it did keep theirs: one is written into
    // storage as an older version stored it, and a registry started over it.
    const name = 'Escapy \u001b[31mRED\u001b]0;pwned-title\u0007 \u001b[2J \u009b1m \u202eend';
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    assert.equal(errorOf(await op(alice, { register: { agentCard: v1Card(name, 'https://escapy.example.org/a2a') } })).code, 'VALIDATION_FAILED');
    const dataDir = tempDir();
    const store = createStore({ dataDir });
    await store.open();
    const stored = await store.upsert(entryWrite('agent', 'https://escapy.example.org/a2a', '1', name), actor('alice'));
    await store.close();
    assert.equal(stored.status, 'created');
    const id = stored.status === 'created' ? stored.entry.id : '';
    const older = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    try {
      const olderEnv = { A2A_REGISTRY_URL: older.url, A2A_REGISTRY_TOKEN: TOKENS.alice };
      const [search, get, json, declined] = await Promise.all([
        cli(['search', 'Escapy'], { env: olderEnv }),
        cli(['get', id], { env: olderEnv }),
        cli(['get', '--json', id], { env: olderEnv }),
        cli(['get', 'no-such-\u001b[2J-entry'], { env: olderEnv }), // the registry's message quotes the id back
      ]);
      for (const [what, run] of Object.entries({ search, get, json, declined })) {
        assert.doesNotMatch(run.stdout + run.stderr, TERMINAL_CONTROL, `${what} writes a control character raw`);
      }
      assert.equal(search.code, 0, search.stderr);
      assert.ok(search.stdout.includes('Escapy \\u001b[31mRED'), search.stdout);
      assert.equal(get.code, 0, get.stderr);
      assert.ok(get.stdout.includes('Escapy \\u001b[31mRED\\u001b]0;pwned-title\\u0007 \\u001b[2J \\u009b1m \\u202eend (agent, A2A 1.0)'), get.stdout);
      assert.equal(declined.code, 1);
      assert.ok(declined.stderr.includes('no-such-\\u001b[2J-entry'), declined.stderr);
      // --json is JSON with the same value: what JSON.stringify left raw (C1, bidi) is a JSON escape too.
      assert.equal(json.code, 0, json.stderr);
      assert.equal(parse(json).name, name);
      assert.ok(json.stdout.includes('\\u009b1m \\u202eend'), json.stdout);

      // On a terminal (a pseudo-terminal from script(1)) the CLI's own colours are still there,
      // and they are the only escape sequences: the stored name's stay escaped.
      if (!fs.existsSync('/usr/bin/script')) return;
      const tty = await onTerminal([BIN, 'get', id], olderEnv);
      assert.ok(tty.includes('\u001b[1mEscapy \\u001b[31mRED'), JSON.stringify(tty));
      assert.doesNotMatch(tty.replace(/\u001b\[[012]m/g, '').replace(/\r\n/g, '\n'), TERMINAL_CONTROL);
    } finally {
      await older.close();
    }
  });

  test('every command takes --json, and a usage error the option parser finds is an {"error"} document with it too', async () => {
    for (const command of (await buildProgram()).commands) {
      assert.ok(command.options.some((o) => o.long === '--json'), `${command.name()} has no --json`);
    }
    const cases = [
      [['search', '--json', '--limit', '0'], /--limit/],
      [['search', '--bogus', '--json'], /unknown option '--bogus'/],
      [['get', '--json'], /missing required argument 'id'/],
    ] as const;
    const runs = await Promise.all(cases.map(([args]) => cli([...args])));
    for (const [i, [, message]] of cases.entries()) {
      const run = runs[i]!;
      assert.equal(run.code, 2, run.stderr);
      const error = parse(run).error;
      assert.equal(error.code, 'USAGE', run.stdout);
      assert.match(error.message, message);
      assert.match(run.stderr, message, 'stderr still says it');
    }
  });

  test('watch --list without a token says that none was sent (watches are the token\'s that started them), not just "no open watch"', async () => {
    const [human, json] = await Promise.all([cli(['watch', '--list'], { env }), cli(['watch', '--list', '--json'], { env })]);
    for (const run of [human, json]) {
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, 'No token was sent: watches are listed for the token that started them; give it with --token or A2A_REGISTRY_TOKEN.\n');
    }
    assert.equal(human.stdout, 'no open watch\n');
    assert.deepEqual(parse(json), { watches: [] });
  });

  test('get: a line break in a description or a tag (allowed in running text) cannot print a line that reads as one of the registry\'s fields', async () => {
    const card = v1Card('Forged Lines Agent', 'https://forged-lines.example.org/a2a');
    card.description = 'Weather\n  owner       alice\n  interfaces  JSONRPC 1.0     https://evil.example.net/a2a';
    card.skills[0]!.description = 'Translates.\n    Admin skill (admin-skill)';
    card.skills[0]!.tags = ['finance\n  owner       alice'];
    const admin = await sdkClient(registry.url, { token: TOKENS.admin });
    const { id } = resultOf(await op(admin, { register: { agentCard: card } }));
    const human = await cli(['get', id], { env });
    assert.equal(human.code, 0, human.stderr);
    const lines = human.stdout.split('\n');
    assert.deepEqual(lines.filter((l) => /^ {2}owner\b/.test(l)), ['  owner       admin'], human.stdout);
    assert.deepEqual(lines.filter((l) => /^ {2}interfaces\b/.test(l)).length, 1, human.stdout);
    // Continued under the first line of its own text, never at the margin of another field or skill.
    assert.ok(human.stdout.includes('  description Weather\n                owner       alice\n'), human.stdout);
    assert.ok(human.stdout.includes('      Translates.\n          Admin skill (admin-skill)\n'), human.stdout);
    assert.match(human.stdout, /^ {4}Translate invoice \(translate-invoice\) \[finance owner alice\]$/m);
  });
});

describe('a2a-registry when the registry cannot be reached (exit 3)', () => {
  test('connection refused: one line, no stack trace; --json gives an error document', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const [human, json, write, watchLines, watchUsage] = await Promise.all([
      cli(['search', 'anything', '--registry', url]),
      cli(['ls', '--json', '--registry', url]),
      cli(['register', example('agent-card.json'), '--registry', url, '--token', TOKENS.alice]),
      cli(['watch', 'x', '--json', '--registry', url, '--token', TOKENS.bob]),
      cli(['watch', 'x', '--json', '--limit', '3', '--registry', url]),
    ]);
    for (const r of [human, json, write, watchLines]) assert.equal(r.code, 3, r.stderr);
    assert.equal(human.stderr, `a2a-registry: cannot reach the registry at ${url}: connection refused\n`);
    assert.equal(parse(json).error.code, 'UNREACHABLE');
    assertNoStack(write);
    // watch --json prints JSON lines: its failure is one line of them, as a line-by-line reader takes it.
    assert.equal(watchLines.stdout, `${JSON.stringify({ error: { code: 'UNREACHABLE', message: `cannot reach the registry at ${url}: connection refused` } })}\n`);
    assert.equal(watchUsage.code, 2, watchUsage.stderr);
    assert.equal(watchUsage.stdout, `${JSON.stringify({ error: { code: 'USAGE', message: "unknown option '--limit' (Did you mean --list?)" } })}\n`);
  });

  test('a token on the command line (--token) is warned about once, first (the process list shows it to every user), pointing at A2A_REGISTRY_TOKEN; never shown; none from the environment variable, nor for an empty --token', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const secret = 'CliFlagToken0123456789';
    const [flagged, watched, fromEnv, empty] = await Promise.all([
      cli(['--token', secret, 'ls', '--registry', url]),
      cli(['watch', 'x', '--json', '--registry', url, '--token', secret]),
      cli(['ls', '--registry', url], { env: { A2A_REGISTRY_TOKEN: secret } }),
      // `--token "$UNSET"`: no token in the process list, so no warning about one; only the refusal of an empty token.
      cli(['ls', '--registry', url, '--token', '']),
    ]);
    for (const run of [flagged, watched]) {
      assert.equal(run.code, 3, run.stderr);
      const lines = run.stderr.split('\n');
      assert.match(lines[0]!, /^a2a-registry: warning: --token carries a registry token, which every user of this machine can read in the process list \(ps\) .*A2A_REGISTRY_TOKEN instead/, run.stderr);
      assert.equal(lines.filter((line) => /--token carries/.test(line)).length, 1, 'once');
      assert.doesNotMatch(run.stderr + run.stdout, new RegExp(secret));
    }
    assert.equal(fromEnv.code, 3, fromEnv.stderr);
    assert.equal(fromEnv.stderr, `a2a-registry: cannot reach the registry at ${url}: connection refused\n`);
    assert.equal(empty.code, 2, empty.stderr);
    assert.equal(
      empty.stderr,
      "a2a-registry: --token (or A2A_REGISTRY_TOKEN) is empty: an unset shell variable? Give the token, or leave both out (on the registry's machine its generated admin token is then used)\n",
    );
  });

  test('a host that does not resolve, and a registry that never answers (--timeout)', async () => {
    const silent = http.createServer(() => {
      /* never answers */
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const [dns, slow] = await Promise.all([
        cli(['search', 'x', '--registry', 'http://registry.does-not-exist.invalid']),
        cli(['search', 'x', '--registry', `http://127.0.0.1:${port}`, '--timeout', '0.5']),
      ]);
      assert.equal(dns.code, 3, dns.stderr);
      assert.match(dns.stderr, /^a2a-registry: cannot reach the registry at http:\/\/registry\.does-not-exist\.invalid: /);
      assert.equal(slow.code, 3, slow.stderr);
      assert.match(slow.stderr, /no answer within 0\.5 s/);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  test('a server that is not a registry', async () => {
    const other = http.createServer((_req, res) => res.writeHead(404).end('not here'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    // A static web server (python3 -m http.server) in a folder holding some agent's card: the
    // card is there, and a POST gets an HTML error page.
    const cardCard = JSON.stringify(v1Card('Some Agent', 'https://some-agent.example.org/a2a/jsonrpc'));
    const staticServer = http.createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') res.writeHead(200, { 'content-type': 'application/json' }).end(cardCard);
      else res.writeHead(501, "Unsupported method ('POST')", { 'content-type': 'text/html;charset=utf-8' }).end('<!DOCTYPE HTML>\n<html lang="en">\n<head><title>Error response</title></head>\n<body><h1>Error response</h1><p>Error code: 501</p></body>\n</html>\n');
    });
    await new Promise<void>((resolve) => staticServer.listen(0, '127.0.0.1', resolve));
    const secure = await startOrigin({ tls: { ...selfSignedCertificate('127.0.0.1'), host: '127.0.0.1' } });
    // A proxy in front of the registry limiting requests: its Retry-After an HTTP-date (under
    // /dated), or none. The date was dropped, and no header was "retry after 0 s".
    const retryAt = new Date(Date.now() + 120_000);
    const limiter = http.createServer((req, res) =>
      res.writeHead(429, { 'content-type': 'text/html', ...(req.url?.startsWith('/dated/') ? { 'retry-after': retryAt.toUTCString() } : {}) }).end('<h1>429 Too Many Requests</h1>'),
    );
    await new Promise<void>((resolve) => limiter.listen(0, '127.0.0.1', resolve));
    try {
      const port = (other.address() as AddressInfo).port;
      const limiterUrl = `http://127.0.0.1:${(limiter.address() as AddressInfo).port}`;
      const staticUrl = `http://127.0.0.1:${(staticServer.address() as AddressInfo).port}`;
      const [r, tlsToPlain, selfSigned, blockedPort, webServer, webServerJson] = await Promise.all([
        cli(['search', 'x', '--registry', `http://127.0.0.1:${port}`]),
        cli(['search', 'x', '--registry', `https://127.0.0.1:${port}`]),
        cli(['search', 'x', '--registry', secure.url]),
        cli(['search', 'x', '--registry', 'http://127.0.0.1:6000']),
        cli(['ls', '--registry', staticUrl]),
        cli(['search', 'x', '--json', '--registry', staticUrl]),
      ]);
      const [dated, undated] = await Promise.all([cli(['ls', '--json', '--registry', `${limiterUrl}/dated`]), cli(['ls', '--registry', limiterUrl])]);
      assert.equal(dated.code, 1, dated.stderr);
      const limited = parse(dated).error;
      assert.equal(limited.code, 'RATE_LIMITED');
      // Whole seconds to the date, rounded up (the date itself has whole seconds only).
      assert.ok(limited.retryAfterSeconds > 100 && limited.retryAfterSeconds <= 120, JSON.stringify(limited));
      const said = Number(/\n {2}retry after (\d+) s\n$/.exec(dated.stderr)?.[1]);
      assert.ok(said > 100 && said <= 120, dated.stderr);
      assert.equal(undated.code, 1, undated.stderr);
      assert.equal(undated.stderr, 'declined RATE_LIMITED: The registry refused the request: too many requests (HTTP 429).\n');
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, /no A2A registry at http:\/\/127\.0\.0\.1:\d+ .*check --registry/);
      // What answered (status, content type), not its page: it was exit 1 with the HTML in the message.
      assert.equal(webServer.code, 3, webServer.stderr);
      assert.equal(
        webServer.stderr,
        `a2a-registry: no A2A registry at ${staticUrl} (POST /a2a/jsonrpc was answered HTTP 501 Unsupported method ('POST'), text/html, not the registry's JSON); check --registry or A2A_REGISTRY_URL, or the proxy in front of the registry\n`,
      );
      assert.equal(webServerJson.code, 3, webServerJson.stderr);
      assert.equal(parse(webServerJson).error.code, 'UNREACHABLE');
      assert.doesNotMatch(webServerJson.stdout + webServerJson.stderr, /<html|DOCTYPE/i);
      // What to do, not OpenSSL's "0A00010B:SSL routines:tls_validate_record_header:wrong version number".
      assert.equal(tlsToPlain.code, 3, tlsToPlain.stderr);
      assert.equal(tlsToPlain.stderr, `a2a-registry: cannot reach the registry at https://127.0.0.1:${port}: the server there does not speak TLS; if the registry serves plain HTTP, give an http:// URL\n`);
      assert.equal(selfSigned.code, 3, selfSigned.stderr);
      assert.match(selfSigned.stderr, /: its TLS certificate is self-signed; to trust it, set NODE_EXTRA_CA_CERTS to that certificate/);
      // A port browsers block (X11's) is tried like any other (the global fetch refused it, "bad port"): nothing listens there.
      assert.equal(blockedPort.code, 3, blockedPort.stderr);
      assert.match(blockedPort.stderr, /^a2a-registry: cannot reach the registry at http:\/\/127\.0\.0\.1:6000: (connection refused|no A2A registry)/);
    } finally {
      other.close();
      staticServer.close();
      limiter.close();
      await secure.close();
    }
  });
});

describe('the admin-token fallback', () => {
  // One registry with the harness's defaults for the tests that need no setting of their own
  // (each registers its own entries, or none), started by the first that asks.
  let defaults: Promise<TestRegistry> | undefined;
  const defaultRegistry = (): Promise<TestRegistry> => (defaults ??= startTestRegistry());
  after(async () => {
    if (defaults) await (await defaults).close();
  });

  test('without a token, the registry\'s generated admin token in REGISTRY_DATA_DIR is used', async () => {
    const registry = await startTestRegistry({ REGISTRY_TOKENS: '' });
    try {
      assert.ok(fs.existsSync(path.join(registry.dataDir, 'admin-token')));
      const env = { A2A_REGISTRY_URL: registry.url, REGISTRY_DATA_DIR: registry.dataDir };
      const r = await cli(['register', '--json', example('agent-card.json')], { env });
      assert.equal(r.code, 0, r.stderr);
      const mine = await cli(['ls', '--json', '--mine'], { env });
      assert.deepEqual(parse(mine).entries.map((e: { owner: string }) => e.owner), ['admin']);
      // Without the data directory there is no token, and writes are declined.
      // So are they for a user who may not read the token file (root: nobody; others: the file
      // made unreadable), which is named: the hint said only "is used when readable".
      const asRoot = process.getuid?.() === 0;
      const tokenFile = path.join(registry.dataDir, 'admin-token');
      if (!asRoot) fs.chmodSync(tokenFile, 0o000);
      const [none, unreadable, emptyToken] = await Promise.all([
        cli(['register', example('agent-card-v0.3.json')], { env: { A2A_REGISTRY_URL: registry.url } }),
        cli(['register', example('agent-card-v0.3.json')], { env, ...(asRoot ? { uid: 65534 } : {}) }),
        // `A2A_REGISTRY_TOKEN=$ALICE_TOKEN` unset: it registered as admin, with the token file's token.
        cli(['register', '--json', example('agent-card-v0.3.json')], { env: { ...env, A2A_REGISTRY_TOKEN: '' } }),
      ]).finally(() => fs.chmodSync(tokenFile, 0o600));
      assert.equal(emptyToken.code, 2, emptyToken.stdout);
      assert.equal(parse(emptyToken).error.code, 'USAGE');
      assert.match(emptyToken.stderr, /^a2a-registry: --token \(or A2A_REGISTRY_TOKEN\) is empty: an unset shell variable\? Give the token, or leave both out/);
      assert.equal(none.code, 1);
      assert.match(none.stderr, /UNAUTHENTICATED/);
      assert.doesNotMatch(none.stderr, /may not read/);
      assert.equal(unreadable.code, 1, unreadable.stderr);
      assert.match(
        unreadable.stderr,
        new RegExp(`UNAUTHENTICATED[\\s\\S]*\\nNo token was sent: user \\S+ \\(uid \\d+\\) may not read the registry's admin token in ${tokenFile} \\(permission denied\\)\\. Run the command as the registry's user, or give a token`),
      );
    } finally {
      await registry.close();
    }
  });

  test('REGISTRY_DATA_DIR given empty (an unset shell variable) is ./data, as the registry reads it, and said in the registry\'s words', async () => {
    const registry = await startTestRegistry({ REGISTRY_TOKENS: '' });
    const cwd = tempDir();
    try {
      // The folder the command runs in holds the registry's data directory as ./data.
      fs.mkdirSync(path.join(cwd, 'data'));
      fs.copyFileSync(path.join(registry.dataDir, 'admin-token'), path.join(cwd, 'data', 'admin-token'));
      const warning = `REGISTRY_DATA_DIR is set but empty: taken as unset, so its default, ./data (${path.join(cwd, 'data')}) (an unset shell variable?)`;
      const written = await cli(['register', '--json', example('agent-card.json')], { env: { A2A_REGISTRY_URL: registry.url, REGISTRY_DATA_DIR: '' }, cwd });
      assert.equal(written.code, 0, written.stderr);
      assert.equal(parse(written).created, true, 'registered with the admin token in ./data');
      // It was used without a word: the registry says this at start-up, backup and import say it.
      assert.equal(written.stderr, `a2a-registry: warning: ${warning}\n`);
    } finally {
      await registry.close();
      fs.rmSync(cwd, { recursive: true, force: true });
    }
    // The registry's own sentence, word for word; nothing said where the variable is not read (a token given, another host).
    const empty = { REGISTRY_DATA_DIR: '' };
    assert.deepEqual(resolveConnection({ registry: 'http://127.0.0.1:8080' }, empty).warnings, loadStorageLocation(empty).warnings);
    assert.equal(resolveConnection({ registry: 'http://127.0.0.1:8080', token: 'given' }, empty).warnings, undefined);
    assert.equal(resolveConnection({ registry: 'https://registry.example.org' }, empty).warnings, undefined);
  });

  test('on the registry\'s machine behind a proxy (PUBLIC_URL another host), the CLI talks to the URL it was given', async () => {
    // The card advertises https://registry.does-not-exist.invalid/a2a/jsonrpc: unreachable from
    // here, and another host than the one the local admin token may go to.
    const registry = await startTestRegistry({ REGISTRY_TOKENS: '', PUBLIC_URL: 'https://registry.does-not-exist.invalid' });
    try {
      const env = { A2A_REGISTRY_URL: registry.url, REGISTRY_DATA_DIR: registry.dataDir };
      const written = await cli(['register', '--json', example('agent-card.json')], { env });
      assert.equal(written.code, 0, written.stderr);
      const mine = await cli(['ls', '--json', '--mine'], { env });
      assert.equal(mine.code, 0, mine.stderr);
      assert.deepEqual(parse(mine).entries.map((e: { id: string }) => e.id), [parse(written).id]);
    } finally {
      await registry.close();
    }
    // The endpoint is the end of the advertised URL, whatever PUBLIC_URL's path holds; gRPC's host:port stays.
    const card = { supportedInterfaces: [{ url: 'https://x.example.com/a2a/a2a/jsonrpc?t=1' }, { url: 'grpc.example.com:443' }] } as unknown as AgentCard;
    assert.deepEqual(atRegistryUrl(card, 'http://127.0.0.1:8080').supportedInterfaces.map((i) => i.url), ['http://127.0.0.1:8080/a2a/jsonrpc?t=1', 'grpc.example.com:443']);
  });

  test('a token the registry refuses at its door (HTTP 401) is UNAUTHENTICATED, and says when it was the data directory\'s; a read goes again without that token', async () => {
    // REGISTRY_TOKENS: a generated admin-token file left behind is stale
    const [registry, closedRegistry] = await Promise.all([defaultRegistry(), startTestRegistry({ REGISTRY_PUBLIC_READ: 'false' })]);
    try {
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const entry = resultOf(await op(alice, { register: { agentCard: v1Card('Stale Token Reader', 'https://stale-token.example.org/a2a') } }));
      // The folder the command runs in holds another registry's data directory (the README's Compose section runs one there).
      const dir = tempDir();
      fs.writeFileSync(path.join(dir, 'admin-token'), 'a2ar_stale-generated-token-0123456789\n');
      const env = { A2A_REGISTRY_URL: registry.url, REGISTRY_DATA_DIR: dir };
      const [json, human, write, closed, closedRead] = await Promise.all([
        cli(['search', 'stale', '--json'], { env }),
        cli(['ls'], { env }),
        cli(['rm', entry.id], { env }),
        cli(['ls', '--json', '--token', 'not-a-token-of-this-registry'], { env: { A2A_REGISTRY_URL: registry.url } }),
        cli(['search', 'stale'], { env: { A2A_REGISTRY_URL: closedRegistry.url, REGISTRY_DATA_DIR: dir } }),
      ]);
      // Reads need no token here: they go again without the file's, as without the file.
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(parse(json).results.map((h: { id: string }) => h.id), [entry.id]);
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /Stale Token Reader/);
      // A write needs one: declined, saying the data directory's was sent and refused.
      assert.equal(write.code, 1, write.stderr);
      assert.match(write.stderr, /^declined UNAUTHENTICATED: /);
      assert.match(write.stderr, /The admin token from the data directory was sent and not accepted/);
      assert.ok(resultOf(await op(alice, { get: { id: entry.id } })), 'the entry is still there');
      // A token the user gave is theirs: refused, never dropped.
      assert.equal(closed.code, 1, closed.stderr);
      assert.equal(parse(closed).error.code, 'UNAUTHENTICATED');
      assert.match(parse(closed).error.message, /bearer token is not recognised/);
      // Where reads need a token too (REGISTRY_PUBLIC_READ=false), a read is declined as a write is.
      assert.equal(closedRead.code, 1, closedRead.stderr);
      assert.match(closedRead.stderr, /^declined UNAUTHENTICATED: /);
      assert.match(closedRead.stderr, /The admin token from the data directory was sent and not accepted/);
      assertNoStack(write);
    } finally {
      await closedRegistry.close();
    }
  });

  test('a request over the address\'s rate limit (HTTP 429 at the door) is RATE_LIMITED with retryAfterSeconds', async () => {
    const registry = await startTestRegistry({ REGISTRY_RATE_REQUESTS_PER_MINUTE: '2' });
    try {
      let run: Run | undefined;
      for (let i = 0; i < 5; i++) {
        run = await cli(['search', 'x', '--json'], { env: { A2A_REGISTRY_URL: registry.url } });
        if (run.code !== 0) break;
      }
      assert.equal(run!.code, 1, run!.stderr);
      const { error } = parse(run!);
      assert.equal(error.code, 'RATE_LIMITED');
      assert.match(error.message, /Too many requests from this address/);
      assert.ok(Number.isInteger(error.retryAfterSeconds) && error.retryAfterSeconds > 0, JSON.stringify(error));
      const human = await cli(['search', 'x'], { env: { A2A_REGISTRY_URL: registry.url } });
      assert.match(human.stderr, /^declined RATE_LIMITED: Too many requests from this address.*\n {2}retry after \d+ s\n$/);
    } finally {
      await registry.close();
    }
  });

  test('storage unavailable (a real, full tmpfs) is STORAGE_UNAVAILABLE, not a protocol error; a backup to it and a restore into it name the full disk, and change nothing', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('mounting a tmpfs needs root');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-cli-full-disk-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', dir], { stdio: 'pipe' });
    } catch (error) {
      fs.rmdirSync(dir);
      return t.skip(`cannot mount a tmpfs here: ${(error as Error).message.split('\n')[0]}`);
    }
    const registry = await startTestRegistry({ REGISTRY_DATA_DIR: path.join(dir, 'data') });
    try {
      // Fill the disk, then write until the write-ahead log's spare room is used up too.
      const fd = fs.openSync(path.join(dir, 'filler'), 'w');
      for (let size = 64 * 1024; size >= 512; ) {
        try {
          fs.writeSync(fd, Buffer.alloc(size, 1));
        } catch {
          size /= 2;
        }
      }
      fs.closeSync(fd);
      const client = await sdkClient(registry.url, { token: TOKENS.alice });
      for (let i = 0; i < 1000; i++) {
        const answer = await client.sendMessage(SendMessageRequest.fromJSON({ message: { messageId: `m${i}`, role: 'ROLE_USER', parts: [{ data: { register: { agentCard: v1Card(`Spare ${i}`, `https://spare-${i}.example.org/a2a`) } }, mediaType: 'application/json' }] } })).then(
          () => undefined,
          (err: unknown) => err,
        );
        if (answer) break;
      }
      const run = await cli(['register', '--json', example('agent-card.json')], { env: { A2A_REGISTRY_URL: registry.url, A2A_REGISTRY_TOKEN: TOKENS.alice } });
      assert.equal(run.code, 1, run.stderr);
      const { error } = parse(run);
      assert.equal(error.code, 'STORAGE_UNAVAILABLE');
      assert.match(error.message, /^Storage is unavailable: .*disk .* full/);
      assert.match(run.stderr, /^declined STORAGE_UNAVAILABLE: Storage is unavailable: /);

      // A backup to, and a restore into, the full disk say which disk is full and that nothing
      // changed (it was "copying <the registry's database> failed: database or disk is full",
      // as if the database's disk were the full one, and "the restore failed: database or disk is full").
      const database = path.join(dir, 'data', 'registry.db');
      const good = path.join(tempDir('a2a-registry-full-disk-backup-'), 'b.db');
      await backupSqlite(database, good, { overwrite: false });
      const onFullDisk = path.join(dir, 'b.db');
      await assert.rejects(backupSqlite(database, onFullDisk, { overwrite: false }), (error: Error) => {
        assert.match(error.message, new RegExp(`^the disk holding ${dir} is full, so nothing was written to ${onFullDisk}: the copy needs up to [\\d.]+ MiB there \\(the size of ${database}\\)\\. Free some space there, or write the backup to another disk$`));
        return true;
      });
      assert.deepEqual(fs.readdirSync(dir).filter((f) => f.startsWith('b.db')), [], 'no backup, no temporary copy');
      await registry.close();
      const before = fs.readFileSync(database);
      await assert.rejects(restoreSqlite(good, database, { overwrite: true }), (error: Error) => {
        assert.match(error.message, new RegExp(`^the disk holding ${dir}/data is full, so ${database} is as it was: the restore's copy needs up to [\\d.]+ MiB there \\(the size of ${good}\\)\\. Free some space there, then restore again$`));
        return true;
      });
      assert.deepEqual(fs.readFileSync(database), before);
      assert.deepEqual(fs.readdirSync(path.join(dir, 'data')).filter((f) => /\.(restore|replaced)/.test(f)), [], 'no copy, nothing moved aside');
    } finally {
      await registry.close();
      execFileSync('umount', [dir]);
      fs.rmdirSync(dir);
    }
  });

  test('a registry behind a proxy under a path prefix (/registry) is found at its own card, not the host\'s root', async () => {
    const registry = await defaultRegistry();
    const target = new URL(registry.url);
    // A reverse proxy serving the registry under /registry (prefix stripped) and nothing at its root.
    const proxy = http.createServer((req, res) => {
      if (!req.url?.startsWith('/registry/')) return void res.writeHead(404).end('not here');
      const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url.slice('/registry'.length), headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/registry`;
      // A word no entry of the shared registry holds: an answer, and an empty one.
      const run = await cli(['search', 'zzqxnothingmatches', '--json', '--registry', base]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(parse(run).total, 0);
    } finally {
      proxy.closeAllConnections();
      proxy.close();
    }
  });

  test('the token file is only read for a registry on this machine', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'admin-token'), 'a2ar_local-admin-token-0123456789\n');
    const env = { REGISTRY_DATA_DIR: dir };
    assert.equal(resolveConnection({ registry: 'http://127.0.0.1:8080' }, env).token, 'a2ar_local-admin-token-0123456789');
    assert.equal(resolveConnection({ registry: 'http://localhost:9000/' }, env).tokenSource, 'admin-token-file');
    assert.equal(resolveConnection({ registry: 'https://registry.example.org' }, env).token, undefined);
    assert.equal(resolveConnection({ registry: 'http://127.0.0.1:8080', token: 'given' }, env).token, 'given');
    // An empty --token (an unset variable) is no reason to send the admin token instead.
    for (const token of ['', ' ']) assert.throws(() => resolveConnection({ registry: 'http://127.0.0.1:8080', token }, env), /--token \(or A2A_REGISTRY_TOKEN\) is empty: an unset shell variable\?/);
    // Nor is an empty --registry a reason to talk to the registry on this machine, with its admin token.
    assert.throws(() => resolveConnection({ registry: '' }, env), /^Error: --registry \(or A2A_REGISTRY_URL\) is empty: an unset shell variable\? Give the registry's URL, or leave both out for http:\/\/127\.0\.0\.1:8080$/);
  });
});

describe('list {"mine": true} (the contract extension behind ls --mine)', () => {
  test('lists the caller\'s entries; needs a token; conflicts with another owner', async () => {
    const registry = await startTestRegistry();
    try {
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const bob = await sdkClient(registry.url, { token: TOKENS.bob });
      const anonymous = await sdkClient(registry.url);
      resultOf(await op(alice, { register: { agentCard: v1Card('Alice Agent', 'https://alice.example.org/a2a') } }));
      resultOf(await op(bob, { register: { agentCard: v1Card('Bob Agent', 'https://bob.example.org/a2a') } }));
      const mine = resultOf(await op(alice, { list: { filter: { mine: true } } }));
      assert.deepEqual(mine.entries.map((e: { name: string }) => e.name), ['Alice Agent']);
      assert.deepEqual(resultOf(await op(alice, { list: { filter: { mine: true, owner: 'alice', kind: 'agent' } } })).entries.length, 1);
      assert.equal(errorOf(await op(anonymous, { list: { filter: { mine: true } } })).code, 'UNAUTHENTICATED');
      assert.equal(errorOf(await op(alice, { list: { filter: { mine: true, owner: 'bob' } } })).code, 'BAD_REQUEST');
      assert.equal(stateOf(await op(anonymous, { list: { filter: { owner: 'bob' } } })), 'TASK_STATE_COMPLETED', 'owner alone still works');
    } finally {
      await registry.close();
    }
  });
});

describe('a2a-registry serve', () => {
  test('starts the registry with flags over the environment; the CLI talks to it; SIGTERM stops it', async () => {
    const dataDir = tempDir();
    ensureBuilt();
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--grpc-port', '0', '--data-dir', dataDir, '--log-level', 'info'], {
      cwd: REPO_ROOT,
      env: { ...baseEnv(), PORT: '1', LOG_LEVEL: 'silent' }, // the flags win over these
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 30_000);
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)".*"msg":"registry listening"|"msg":"registry listening".*"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve((m[1] ?? m[2])!);
          }
        });
      });
      assert.ok(fs.existsSync(path.join(dataDir, 'admin-token')), '--data-dir is used');
      const card = (await (await fetch(`${url}/.well-known/agent-card.json`)).json()) as { supportedInterfaces: { protocolBinding: string; url: string }[] };
      assert.match(card.supportedInterfaces.find((i) => i.protocolBinding === 'GRPC')?.url ?? '', /^127\.0\.0\.1:[1-9]\d*$/, '--grpc-port turns gRPC on');
      const r = await cli(['register', '--json', example('agent-card.json')], { env: { A2A_REGISTRY_URL: url, REGISTRY_DATA_DIR: dataDir } });
      assert.equal(r.code, 0, r.stderr);
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('a setting found bad only once used (a file it names) is refused before the server\'s modules load, as npm start refuses it', async () => {
    const report = path.join(tempDir(), 'loaded');
    const r = await cli(['serve', '--port', '0', '--data-dir', tempDir()], { env: { REGISTRY_SYNONYMS: '/nonexistent-a2a-registry/synonyms.txt', NODE_OPTIONS: recordingLoadedModules(report) } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^a2a-registry: invalid configuration: REGISTRY_SYNONYMS: \/nonexistent-a2a-registry\/synonyms\.txt does not exist; set REGISTRY_SYNONYMS to the path of a synonym file/);
    const loaded = loadedModules(report);
    assert.ok(loaded.some((url) => url.endsWith('/dist/src/config/config.js')), `the modules were seen: ${loaded.join(' ')}`);
    assert.deepEqual(serverModules(loaded), [], 'refused before the server\'s modules load');
  });

  test('an invalid setting stops it with one line naming the flag (exit 2)', async () => {
    // A port in use: the message named PORT, which the flag overrides (exit 1: it could not start).
    const holder = http.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as AddressInfo).port;
    const badDatabaseUrl = { DATABASE_URL: 'postgres://registry:p#ss@127.0.0.1:1/registry' };
    // Every process at once: each stops before serving anything.
    const [r, grpc, samePort, inUse, noHost, noKeys, badServe, badImport, flag] = await Promise.all([
      cli(['serve', '--public-url', 'ftp://registry']),
      cli(['serve', '--public-grpc-url', 'grpc.example.com:443']),
      // Two servers on one port: said before anything starts, not as gRPC's "No address added … EADDRINUSE" once HTTP holds it.
      cli(['serve', '--port', '48123', '--grpc-port', '48123']),
      cli(['serve', '--port', String(taken), '--data-dir', tempDir()]),
      // A host found to be no address of this machine only when it listens, and a file a setting
      // names that cannot be read, are settings to fix all the same (exit 2): "could not start" (exit 1).
      cli(['serve', '--host', '999.1.1.1', '--port', '0', '--data-dir', tempDir()]),
      cli(['serve', '--port', '0', '--data-dir', tempDir(), '--json'], { env: { REGISTRY_TRUSTED_KEYS: '/nonexistent-a2a-registry/keys.json' } }),
      // A database URL that is no URL (an unencoded "#" in the password) is a setting to fix, said
      // before anything starts; it was "could not start: ... Invalid URL" (exit 1), import's too.
      cli(['serve'], { env: badDatabaseUrl }),
      cli(['import', '-'], { env: badDatabaseUrl }),
      // Given as import's flag, the message names the flag: it said "DATABASE_URL must be ...", which the user never set.
      cli(['import', '-', '--database-url', 'mysql://registry@127.0.0.1/registry']),
    ]).finally(() => holder.close());
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'a2a-registry: invalid configuration: --public-url (PUBLIC_URL) must be an absolute http(s) URL (got "ftp://registry"); e.g. --public-url=https://registry.example.com\n');
    assert.equal(grpc.code, 2);
    assert.match(grpc.stderr, /^a2a-registry: invalid configuration: --public-grpc-url \(PUBLIC_GRPC_URL\) is set but GRPC_PORT is not/);
    // The environment's values are checked alike (in process: the same loadConfig serve runs).
    assert.throws(() => loadConfig({ LOG_LEVEL: 'verbose' }), { message: 'invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace or silent (got "verbose"); e.g. LOG_LEVEL=info (the default)' });
    assert.equal(samePort.code, 2, samePort.stderr);
    assert.equal(
      samePort.stderr,
      'a2a-registry: invalid configuration: --grpc-port (GRPC_PORT) and --port (PORT) are both 48123: the gRPC binding needs a port of its own beside HTTP\'s: give it another (e.g. 50051), or leave it unset to serve no gRPC\n',
    );
    // A port in use: the message named PORT, which the flag overrides (exit 1: it could not start).
    assert.equal(inUse.code, 1, inUse.stderr);
    assert.match(inUse.stderr, new RegExp(`^a2a-registry: could not start: port ${taken} on 127\\.0\\.0\\.1 is already in use: stop what uses it, or set --port \\(PORT\\) to another port`, 'm'));
    // --grpc-port's reads alike (in process: the message serve names its flag in); it read
    // "gRPC cannot listen on 127.0.0.1:50051 (--grpc-port (GRPC_PORT)): ..." with brackets in brackets.
    assert.equal(
      nameFlags(`could not start: ${grpcBindError('127.0.0.1', 50051, 'listen EADDRINUSE: address already in use 127.0.0.1:50051').message}`, { grpcPort: 50051 }),
      'could not start: gRPC port 50051 on 127.0.0.1 is already in use: stop what uses it, or set --grpc-port (GRPC_PORT) to another port (listen EADDRINUSE: address already in use 127.0.0.1:50051)',
    );
    assert.equal(noHost.code, 2, noHost.stderr);
    // Every mention names the flag: "set HOST to ..." told to set what --host overrides.
    assert.match(noHost.stderr, /^a2a-registry: invalid configuration: --host \(HOST\) 999\.1\.1\.1 is no name this machine can resolve: set --host to an address of this machine/);
    assert.equal(
      nameFlags('invalid configuration: HOST 10.9.9.9 is no address of this machine: set HOST to one of its addresses (127.0.0.1, or 0.0.0.0 for every interface)', { host: '10.9.9.9' }),
      'invalid configuration: --host (HOST) 10.9.9.9 is no address of this machine: set --host to one of its addresses (127.0.0.1, or 0.0.0.0 for every interface)',
    );
    assert.equal(noKeys.code, 2, noKeys.stderr);
    assert.equal(noKeys.stderr.split('\n').length, 2, noKeys.stderr);
    assert.match(noKeys.stderr, /^a2a-registry: invalid configuration: REGISTRY_TRUSTED_KEYS: \/nonexistent-a2a-registry\/keys\.json does not exist; set REGISTRY_TRUSTED_KEYS to the path of a JWKS file/);
    assert.match(noKeys.stdout, /"code":\s*"INVALID_CONFIGURATION"/);
    // A database URL that is no URL is a setting to fix, said before anything starts.
    for (const [args, bad] of [[['serve'], badServe], [['import', '-'], badImport]] as const) {
      assert.equal(bad.code, 2, `${args[0]}: ${bad.stderr}`);
      assert.match(bad.stderr, /DATABASE_URL is not a valid URL: write it as postgres:\/\/user:password@host:5432\/database, with reserved characters .* percent-encoded/, args[0]);
      assert.doesNotMatch(bad.stderr, /p#ss/, `${args[0]}: the password is not shown`);
    }
    // Given as import's flag, the message names the flag.
    assert.equal(flag.code, 2, flag.stderr);
    assert.match(flag.stderr, /^a2a-registry: invalid configuration: --database-url \(DATABASE_URL\) must be a postgres:\/\/ or postgresql:\/\/ URL/);
  });

  test('a database URL with a password on the command line is warned about once, first (the process list shows it to every user), pointing at DATABASE_URL and DATABASE_URL_FILE; one without a password is not', async () => {
    const secret = 'postgres://registry:FlagSecret9@127.0.0.1:1/registry';
    // Each stops at a bad setting after the warning: nothing connects.
    const [served, imported, migrated, schemeless, plain, notUrl] = await Promise.all([
      cli(['serve', '--database-url', secret], { env: { PORT: 'abc' } }),
      cli(['import', '-', '--database-url', secret], { env: { REGISTRY_MAX_DOCUMENT_BYTES: 'abc' } }),
      cli(['migrate', '--to', secret], { env: { REGISTRY_DATA_DIR: ' /data' } }),
      // No URL, but written as credentials are: it may hold one.
      cli(['migrate', '--to', 'registry:FlagSecret9@127.0.0.1/registry'], { env: { REGISTRY_DATA_DIR: ' /data' } }),
      cli(['import', '-', '--database-url', 'postgres://registry@127.0.0.1:1/registry'], { env: { REGISTRY_MAX_DOCUMENT_BYTES: 'abc' } }),
      // No URL and nothing a password is written with: refused as no URL, without a warning about a password it does not hold.
      cli(['migrate', '--to', 'notaurl', '--from', '/nonexistent']),
    ]);
    assert.equal(notUrl.code, 2, notUrl.stderr);
    // The value named as given (nothing in it is a secret), and the form to write.
    assert.equal(
      notUrl.stderr,
      'a2a-registry: --to must be a postgres:// or postgresql:// URL (got "notaurl"); e.g. --to postgres://registry@db.example.com:5432/registry, or that URL in DATABASE_URL (with its password: kept out of the process list)\n',
    );
    for (const [flag, run] of [['--database-url', served], ['--database-url', imported], ['--to', migrated], ['--to', schemeless]] as const) {
      assert.equal(run.code, 2, run.stderr);
      const lines = run.stderr.split('\n');
      assert.match(lines[0]!, new RegExp(`^a2a-registry: warning: ${flag} carries a password, which every user of this machine can read in the process list \\(ps\\) .*DATABASE_URL, or .*DATABASE_URL_FILE`), run.stderr);
      assert.equal(lines.filter((line) => /carries a password/.test(line)).length, 1, 'once');
      assert.doesNotMatch(run.stderr + run.stdout, /FlagSecret9/);
    }
    assert.equal(plain.code, 2, plain.stderr);
    assert.doesNotMatch(plain.stderr, /carries a password/);
  });

  test('an empty flag (an unset shell variable) is refused (exit 2), not taken for the default over the environment', async () => {
    // It was: --database-url "" ran on SQLite in ./data despite DATABASE_URL, --data-dir "" on ./data with a new admin token.
    const flags = ['--host', '--data-dir', '--database-url', '--public-url', '--public-grpc-url'];
    const runs = await Promise.all(flags.map((flag) => cli(['serve', flag, '', '--port', '0'], { env: { DATABASE_URL: 'postgres://registry@127.0.0.1:1/registry', REGISTRY_DATA_DIR: tempDir() } })));
    for (const [i, flag] of flags.entries()) {
      const r = runs[i]!;
      assert.equal(r.code, 2, `${flag}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^error: option '${flag} <[^>]+>' argument '' is invalid\\. must not be empty \\(an unset shell variable\\?\\)\n`), flag);
    }
  });

  test('a database URL is shown without its secrets, however they are given (user:password@, ?password=, ?sslpassword=)', async () => {
    const urls = [
      'postgres://registry:S3CRET@127.0.0.1:1/registry',
      'postgres://registry@127.0.0.1:1/registry?password=S3CRET&application_name=ops',
      'postgresql:///registry?host=/nonexistent-socket-dir&password=S3CRET&sslpassword=S3CRET',
    ];
    // A server not answering (yet) is waited for, and named in the log at each attempt; a socket folder that is not there stops the start.
    // All at once (a data directory each); the last, a setting that is no URL, below.
    const [served, unparsable] = await Promise.all([
      Promise.all(urls.map((url) => cli(['serve', '--data-dir', tempDir(), '--port', '0'], { env: { DATABASE_URL: url }, stopWhen: /trying again at/ }))),
      cli(['serve', '--data-dir', tempDir()], { env: { DATABASE_URL: 'postgres://127.0.0.1:port/registry?password=S3CRET' } }),
    ]);
    const runs = [];
    for (const [i, url] of urls.entries()) {
      const r = served[i]!;
      const said = r.stdout + r.stderr;
      assert.match(said, /Cannot connect to postgres(ql)?:\/\//, url);
      assert.doesNotMatch(said, /S3CRET/, `${url}: the secret is not shown: ${said}`);
      runs.push(said);
    }
    const [userinfo, query, socket] = runs;
    assert.match(userinfo!, /Cannot connect to postgres:\/\/registry:\*\*\*@127\.0\.0\.1:1\/registry: connect ECONNREFUSED[^"]*","attempt":1,"retryAt"/);
    assert.match(query!, /Cannot connect to postgres:\/\/registry@127\.0\.0\.1:1\/registry\?password=\*\*\*&application_name=ops:/, 'what is no secret is shown as given');
    assert.match(socket!, /^a2a-registry: could not start: Cannot connect to postgresql:\/\/\/registry\?host=\/nonexistent-socket-dir&password=\*\*\*&sslpassword=\*\*\*:/m);
    // A setting that is no URL, with a secret in its query: not shown at all (where the secret ends cannot be told).
    assert.equal(unparsable.code, 2, unparsable.stderr);
    assert.match(unparsable.stderr, /^a2a-registry: invalid configuration: DATABASE_URL is not a valid URL: write it as postgres:\/\/user:password@host:5432\/database, [^\n]*\n$/);
    assert.doesNotMatch(unparsable.stderr, /S3CRET/);
  });
});

describe('a data directory that cannot be made', () => {
  // Under /proc, mkdir fails with ENOENT although the parent exists: Node's recursive mkdir then
  // looped for ever, and start-up hung without a word (cli() kills it after a minute).
  test('REGISTRY_DATA_DIR under /proc stops start-up at once with what, where and how to fix it (exit 1)', { skip: !fs.existsSync('/proc/self') && 'no /proc here' }, async () => {
    const dataDir = '/proc/a2a-registry-test/data';
    const [adminToken, database, imported] = await Promise.all([
      cli(['serve', '--port', '0'], { env: { REGISTRY_DATA_DIR: dataDir } }),
      cli(['serve', '--port', '0'], { env: { REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: `alice:${TOKENS.alice}` } }),
      cli(['import', '-', '--data-dir', dataDir], { input: '{}\n' }),
    ]);
    // Given as import's flag, it is named so: "Check that REGISTRY_DATA_DIR ..." sent the user to a variable they never set.
    assert.equal(imported.code, 1, imported.stderr);
    assert.match(imported.stderr, /^a2a-registry: nothing was imported: cannot open the database file \/proc\/a2a-registry-test\/data\/registry\.db for writing \(ENOENT: .*\)\. Check that --data-dir \(REGISTRY_DATA_DIR\) \(\/proc\/a2a-registry-test\/data\) is a directory/);
    // Without tokens too: the admin token is generated once storage is open, so the database is what fails first.
    for (const serve of [adminToken, database]) {
      assert.equal(serve.code, 1, serve.stderr);
      assert.match(
        serve.stderr,
        /^a2a-registry: could not start: cannot open the database file \/proc\/a2a-registry-test\/data\/registry\.db for writing \(ENOENT: .*\)\. Check that REGISTRY_DATA_DIR \(\/proc\/a2a-registry-test\/data\) is a directory/m,
      );
    }
  });
});

describe('a data directory the CLI\'s user may not write or enter', () => {
  // `import` is run by an operator, often not as the user the registry runs as: the message
  // blamed "the user the registry runs as" and named no missing access. As root (who may write
  // anywhere) the CLI runs as nobody; as anyone else the directory is made read-only.
  test('import names this process\'s user, the directory and the access it lacks (exit 1)', async () => {
    const root = tempDir();
    const dataDir = path.join(root, 'data');
    fs.mkdirSync(dataDir);
    const asRoot = process.getuid?.() === 0;
    const uid = asRoot ? 65534 : process.getuid!();
    if (asRoot) fs.chmodSync(root, 0o755);
    else fs.chmodSync(dataDir, 0o555);
    const imported = await cli(['import', '-', '--data-dir', dataDir], { input: '{}\n', ...(asRoot ? { uid } : {}) });
    assert.equal(imported.code, 1, imported.stderr);
    const mode = asRoot ? '0755' : '0555';
    assert.match(
      imported.stderr,
      new RegExp(
        `^a2a-registry: nothing was imported: cannot open the database file ${dataDir}/registry\\.db for writing \\(EACCES: [^)]*\\): ` +
          `user \\S+ \\(uid ${uid}\\) may not create files in ${dataDir} \\(owned by uid \\d+, mode ${mode}\\)\\. ` +
          `Check that --data-dir \\(REGISTRY_DATA_DIR\\) \\(${dataDir}\\) is a directory that user \\S+ \\(uid ${uid}\\) can write to`,
      ),
    );
    assert.doesNotMatch(imported.stderr, /the user the registry runs as/);
  });

  test('backup, migrate and restore of a data directory their user may not enter name it (there was "no database there", or a bare EACCES); so does a backup to a folder its user may not write', async () => {
    const root = tempDir();
    const dataDir = path.join(root, 'data');
    const store = createStore({ dataDir });
    await store.open();
    await store.close();
    const asRoot = process.getuid?.() === 0;
    const uid = asRoot ? 65534 : process.getuid!();
    fs.chmodSync(root, 0o777);
    const backupFile = path.join(root, 'backup.db');
    fs.copyFileSync(path.join(dataDir, 'registry.db'), backupFile);
    fs.chmodSync(backupFile, 0o644);
    // A database this user may read, backed up to a folder it may not write.
    const readable = path.join(root, 'readable');
    fs.mkdirSync(readable, { mode: 0o755 });
    fs.copyFileSync(backupFile, path.join(readable, 'registry.db'));
    const closed = path.join(root, 'closed');
    fs.mkdirSync(closed, { mode: 0o555 });
    fs.chmodSync(closed, 0o555);
    if (!asRoot) fs.chmodSync(dataDir, 0o000);
    try {
      const asUser = asRoot ? { uid } : {};
      const [backup, migrate, restore, unwritable] = await Promise.all([
        cli(['backup', path.join(root, 'copy.db'), '--data-dir', dataDir], asUser),
        cli(['migrate', '--from', dataDir, '--to', 'postgres://registry@127.0.0.1:1/registry'], asUser),
        cli(['restore', backupFile, '--force', '--data-dir', dataDir], asUser),
        cli(['backup', path.join(closed, 'copy.db'), '--data-dir', readable], asUser),
      ]);
      // It was "the backup failed: EACCES: permission denied, open '.../copy.db.<pid>.tmp'" (exit 1).
      assert.equal(unwritable.code, 2, unwritable.stderr);
      assert.match(
        unwritable.stderr,
        new RegExp(`^a2a-registry: cannot write the backup ${closed}/copy\\.db: user \\S+ \\(uid ${uid}\\) may not create files in ${closed} \\(owned by uid \\d+, mode 0555\\); write it to a folder this user may write, or run the backup as a user who may write there\\n$`),
      );
      assert.deepEqual(fs.readdirSync(closed), [], 'nothing written');
      // And restore into it: "the restore failed: EACCES: permission denied, open '...lock'".
      assert.equal(restore.code, 1, restore.stderr);
      assert.match(
        restore.stderr,
        new RegExp(`^a2a-registry: cannot restore into ${dataDir}/registry\\.db: user \\S+ \\(uid ${uid}\\) may not enter the directory ${dataDir} \\(owned by uid \\d+, mode 0(700|000)\\); run the restore as the registry's user\\n$`),
      );
      // A file this user may not read is a usage error (2), as for register, validate and import.
      for (const [run, what] of [[backup, 'backup'], [migrate, 'migration']] as const) {
        assert.equal(run.code, 2, run.stderr);
        assert.match(
          run.stderr,
          new RegExp(
            `^a2a-registry: cannot read the registry database ${dataDir}/registry\\.db: user \\S+ \\(uid ${uid}\\) may not enter the directory ${dataDir} \\(owned by uid \\d+, mode 0(700|000)\\); ` +
              `run the ${what} as the registry's user, or as one who may read its data directory\\n$`,
          ),
        );
      }
    } finally {
      fs.chmodSync(dataDir, 0o700);
    }
  });
});

describe('tables and messages in any script', () => {
  test('columns line up after Chinese, Korean, accented (combining) and emoji names, and a cut never splits a character', () => {
    const columns = [{ title: 'NAME', width: 12 }, { title: 'KIND', width: 5 }, { title: 'ID', width: 0 }];
    // Into a pipe (nothing cut) and on a terminal (cut to the columns), the next column starts 14
    // terminal columns in: a wide character (CJK, Hangul, an emoji shown as emoji) takes two, a
    // combining accent none. They were padded by UTF-16 units, so "agent" came 4 columns late.
    const rows = {
      Weather: 'Weather       agent  x\n',
      北京天气: '北京天气      agent  x\n',
      '날씨 예보': '날씨 예보     agent  x\n',
      'Me\u0301te\u0301o': 'Me\u0301te\u0301o         agent  x\n',
      '🌟 Nimbus': '🌟 Nimbus     agent  x\n',
      // An emoji sequence (joined by zero-width joiners) and a flag are one emoji of two columns (they counted 6 and 4).
      '\u{1f468}\u200d\u{1f469}\u200d\u{1f467} Fam': '\u{1f468}\u200d\u{1f469}\u200d\u{1f467} Fam        agent  x\n',
      '\u{1f1ef}\u{1f1f5} Japan': '\u{1f1ef}\u{1f1f5} Japan      agent  x\n',
    };
    for (const terminalColumns of [undefined, 200]) {
      const table = new Table(columns, styles(false), terminalColumns);
      for (const [name, row] of Object.entries(rows)) assert.equal(table.row([name, 'agent', 'x']), row, `${terminalColumns ?? 'pipe'}: ${name}`);
    }
    const cut = new Table(columns, styles(false), 200);
    assert.equal(cut.row(['北京天气预报服务代理', 'agent', 'x']), '北京天气预…   agent  x\n', 'five ideographs (ten columns), the ellipsis, a space for the half column left');
    assert.equal(cut.row(['🌟🌟🌟🌟🌟🌟🌟', 'agent', 'x']), '🌟🌟🌟🌟🌟…   agent  x\n', 'not half an emoji');
    const family = '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}';
    assert.equal(cut.row([family.repeat(7), 'agent', 'x']), `${family.repeat(5)}…   agent  x\n`, 'not part of an emoji sequence');
    // A message cut to one line is cut between characters too.
    assert.equal(oneLine(`x${'🌟'.repeat(20)}`, 10), `x${'🌟'.repeat(8)}…`);
  });
});

describe('streaming search output', () => {
  /**
   * A proxy in front of the registry that forwards a search stream event by event and holds it
   * after the first chunk of results until the CLI has printed a result line. If the CLI only
   * printed once the stream ended, it would never see the rest: the proxy lets go after a
   * timeout and the test fails on the order of events.
   */
  test('the first results are printed while the stream is still open', async () => {
    let target = '';
    let held: (() => void) | undefined;
    const events: string[] = [];
    const proxy = http.createServer((req, res) => {
      const upstream = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        if (!String(up.headers['content-type']).startsWith('text/event-stream')) {
          up.pipe(res);
          return;
        }
        let buffer = '';
        let holding = false;
        const queue: string[] = [];
        const release = () => {
          holding = false;
          events.push('proxy released the rest of the stream');
          for (const e of queue.splice(0)) res.write(e);
          if (up.complete) res.end();
        };
        up.setEncoding('utf8');
        up.on('data', (d: string) => {
          buffer += d;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const event = buffer.slice(0, end + 2);
            buffer = buffer.slice(end + 2);
            if (holding) {
              queue.push(event);
              continue;
            }
            res.write(event);
            if (event.includes('"artifactUpdate"') && !held) {
              holding = true;
              events.push('proxy sent the first chunk');
              const timer = setTimeout(release, 10_000);
              held = () => {
                clearTimeout(timer);
                if (holding) release();
              };
            }
          }
        });
        up.on('end', () => {
          if (!holding) res.end();
        });
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    // The card's interface URLs come from PUBLIC_URL: the CLI then sends its requests to the proxy.
    const registry = await startTestRegistry({ PUBLIC_URL: proxyUrl });
    target = registry.url;
    try {
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      for (let i = 1; i <= 12; i++) {
        resultOf(await op(alice, { register: { agentCard: v1Card(`Zephyrstream Agent ${i}`, `https://zephyr-${i}.example.org/a2a`) } }));
      }
      let printed = 0;
      const r = await cli(['search', 'zephyrstream', '--limit', '12'], {
        env: { A2A_REGISTRY_URL: proxyUrl },
        onStdout: (chunk) => {
          const rows = chunk.split('\n').filter((l) => l.startsWith('Zephyrstream Agent')).length;
          if (rows > 0 && printed === 0) events.push('CLI printed the first result');
          printed += rows;
          if (printed > 0) held?.();
        },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(events, ['proxy sent the first chunk', 'CLI printed the first result', 'proxy released the rest of the stream']);
      assert.equal(printed, 12, r.stdout);
      assert.match(r.stdout, /12 entries shown; 12 matches in all\./);
    } finally {
      await registry.close();
      proxy.closeAllConnections();
      proxy.close();
    }
  });
});

describe('register --url, --fetch-tools and refresh (issue 16)', () => {
  test('the registry fetches the card, keeps its source; refresh fetches it again', async () => {
    const origin = await startOrigin();
    const registry = await startTestRegistry({ REGISTRY_FETCH_ALLOW: '127.0.0.1' });
    const env = { A2A_REGISTRY_URL: registry.url, A2A_REGISTRY_TOKEN: TOKENS.alice };
    try {
      const card = v1Card('Fetched By CLI', 'https://cli-fetched.example.org/a2a');
      serveCard(origin, card, '/cli');
      const first = await cli(['register', '--url', `${origin.url}/cli`], { env });
      assert.equal(first.code, 0, first.stderr);
      // Named from the registry's answer, as a registration from a file is (the CLI sent no name).
      assert.match(first.stdout, /✓ registered agent "Fetched By CLI" \(A2A 1\.0\)/);
      assert.match(first.stdout, new RegExp(`source +${origin.url}/cli/\\.well-known/agent-card\\.json \\(the registry refreshes it from there\\)`));
      const id = /id +([0-9a-f-]{36})/.exec(first.stdout)![1]!;

      // Typed in capitals: the id the registry answered (lowercase), as register printed it.
      const same = await cli(['refresh', id.toUpperCase()], { env });
      assert.equal(same.code, 0, same.stderr);
      assert.match(same.stdout, new RegExp(`^ +id +${id}$`, 'm'));
      assert.match(same.stdout, /✓ unchanged \(revision 1\)\n +id +[0-9a-f-]{36}\n +source +http:\/\/127\.0\.0\.1:\d+\/cli\/\.well-known\/agent-card\.json\n +health +ok/);
      serveCard(origin, { ...card, version: '3.0.0' }, '/cli');
      const changed = parse(await cli(['refresh', id, '--json'], { env }));
      assert.equal(changed.revision, 2);
      assert.equal(changed.revisionOrigin, 'refresh');

      origin.route('/cli/.well-known/agent-card.json', (_req, res) => void res.writeHead(503).end());
      assert.equal((await cli(['refresh', id], { env })).code, 1);
      const [shown, downRun, okRun, listedRun, fine] = await Promise.all([
        cli(['get', id], { env }),
        cli(['search', 'Fetched', 'By', 'CLI', '--health', 'unreachable', '--json'], { env }),
        cli(['search', 'Fetched', 'By', 'CLI', '--health', 'ok', '--json'], { env }),
        cli(['ls', '--health', 'unreachable', '--json'], { env }),
        cli(['ls', '--health', 'fine'], { env }),
      ]);
      assert.match(shown.stdout, new RegExp(`source +${origin.url}/cli/\\.well-known/agent-card\\.json \\(fetched `));
      assert.match(shown.stdout, /health +unreachable since \S+ \(checked \S+\), 1 failed check in a row: .*HTTP 503/);
      assert.deepEqual(parse(downRun).results.map((h: { id: string }) => h.id), [id]);
      assert.equal(parse(okRun).total, 0);
      assert.deepEqual(parse(listedRun).entries.map((e: { id: string }) => e.id), [id]);
      assert.equal(fine.code, 2);
      // Another kind of failure: another status since now, and the run of failures since the first.
      origin.route('/cli/.well-known/agent-card.json', (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>'));
      assert.equal((await cli(['refresh', id], { env })).code, 1);
      const run = /health +unreachable since (\S+)/.exec(shown.stdout)![1]!;
      const [current, older] = await Promise.all([cli(['get', id], { env }), cli(['get', '--revision', '1', id], { env })]);
      assert.match(current.stdout, new RegExp(`health +invalid since (?!${run})\\S+ \\(checked \\S+\\), 2 failed checks in a row since ${run}: .*text/html`));
      assert.match(current.stdout, /^ {2}revision {4}2\n[^]*^ {2}drift {7}the live document differs from this revision$/m);
      // An older revision says it is not the current one, and the entry's source, health and
      // drift (its state now, compared with the current revision) are labelled so, not the old one's.
      assert.equal(older.code, 0, older.stderr);
      assert.match(older.stdout, /^ {2}revision {4}1 \(not the current one: the entry is at revision 2\)$/m);
      assert.match(older.stdout, new RegExp(`^ {2}source now {2}${origin.url}/cli/\\.well-known/agent-card\\.json \\(fetched `, 'm'));
      assert.match(older.stdout, /^ {2}health now {2}invalid since \S+ \(checked \S+\), 2 failed checks in a row since /m);
      assert.match(older.stdout, /^ {2}drift now {3}the live document differs from the current revision, 2$/m);
      assert.doesNotMatch(older.stdout, /^ {2}(source|health|drift) {2}|differs from this revision/m);

      const usageErrors = [
        [['register', '--url', `${origin.url}/cli`, example('agent-card.json')], /with --url the registry fetches the document: leave out the file/],
        [['register', '--fetch-tools'], /--fetch-tools needs the server: give --mcp-name <name> and --mcp-url <url>/],
        [['register', '--url', `${origin.url}/cli`, '--dry-run'], /--dry-run checks a document you send/],
        [['register'], /give a file, or --url, or --fetch-tools/],
      ] as const;
      // An entry registered inline: the advice is the command that registers by URL, not the A2A request.
      const inline = resultOf(await op(await sdkClient(registry.url, { token: TOKENS.alice }), { register: { agentCard: v1Card('Inline For CLI', 'https://cli-inline.example.org/a2a') } }));
      const [noSource, noSourceJson, refused, ...usage] = await Promise.all([
        cli(['refresh', inline.id], { env }),
        cli(['refresh', inline.id, '--json'], { env }),
        cli(['register', '--url', 'http://10.1.2.3/agent'], { env }),
        ...usageErrors.map(([args]) => cli([...args], { env })),
      ]);
      assert.equal(noSource.code, 1, noSource.stderr);
      assert.match(noSource.stderr, /Register it by URL \(a2a-registry register --url https:\/\/\.\.\.\) or, for an MCP server, with a2a-registry register --fetch-tools --mcp-name <name> --mcp-url <url>, and/);
      assert.doesNotMatch(noSource.stderr, /\{"register"|"fetchTools"/);
      // Named at the argument the user typed, not at the request's /parts/0/data/refresh/id.
      assert.match(noSource.stderr, /^ {2}error {3}<id>: registered inline: no source to refresh from \[refresh-no-source\]$/m);
      assert.deepEqual(parse(noSourceJson).error.details.map((d: { path: string }) => d.path), ['<id>']);

      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /FETCH_FAILED.*10\.1\.2\.3 is a private-network address/);
      assertNoStack(refused);

      for (const [i, [args, message]] of usageErrors.entries()) {
        const r = usage[i]!;
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message);
      }
    } finally {
      await registry.close();
      await origin.close();
    }
  });
});

describe('backup', () => {
  test('backup copies the live database while registrations go on, 0600; restore puts it back (the registry stopped, the replaced database kept) with exactly what it held; never over a file without --force; PostgreSQL is pointed to pg_dump, and to pg_restore as the README runs it', { timeout: 120_000 }, async () => {
    const registry = await startTestRegistry();
    const out = tempDir('a2a-registry-backup-');
    const file = path.join(out, 'registry-backup.db');
    const env = { REGISTRY_DATA_DIR: registry.dataDir };
    let restored: TestRegistry | undefined;
    try {
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const card = (n: number): unknown => v1Card(`Backed up agent ${n}`, `https://backed-up-${n}.example.org/a2a`);
      // More than a page of search results (100), so the restored copy is read page by page. At
      // once: the registry commits them together (group commit), where one at a time each waited
      // for its own commit.
      const registered = await Promise.all(Array.from({ length: 110 }, (_, n) => op(alice, { register: { agentCard: card(n) } })));
      for (const task of registered) assert.equal(stateOf(task), 'TASK_STATE_COMPLETED');
      // Registrations go on while the copy is taken: it holds the first 110 and some of the others, whole.
      let writing = true;
      let written = 110;
      const writer = (async () => {
        for (; writing; written++) assert.equal(stateOf(await op(alice, { register: { agentCard: card(written) } })), 'TASK_STATE_COMPLETED');
      })();
      const run = await cli(['backup', file, '--json'], { env });
      // A few more after the copy: what the copy must not hold.
      const atCopy = written;
      await eventually(async () => written >= atCopy + 2, 'registrations after the copy');
      writing = false;
      await writer;
      assert.equal(run.code, 0, run.stderr);
      const summary = parse(run);
      assert.equal(summary.file, file);
      assert.ok(summary.entries >= 110, `${summary.entries} entries`);
      assert.equal(summary.revisions, summary.entries);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'it holds webhook tokens');
      assert.ok(!fs.readdirSync(out).some((f) => f.endsWith('.tmp')), 'no temporary file is left');
      assert.ok(summary.entries < written, `the copy holds ${summary.entries} entries, ${written} were registered by the end: the later ones are not in it`);

      // A registry.db that is empty, or a folder, is named as restore names a wrong backup (it was
      // "an SQLite database but not a registry's", and "cannot be opened: disk I/O error").
      const wrong = tempDir();
      fs.mkdirSync(path.join(wrong, 'empty'));
      fs.writeFileSync(path.join(wrong, 'empty', 'registry.db'), '');
      fs.mkdirSync(path.join(wrong, 'folder', 'registry.db'), { recursive: true });
      const postgres = { ...env, DATABASE_URL: 'postgres://registry@127.0.0.1:1/registry' };
      const before = fs.readFileSync(file);
      // The refusals at once: none of them writes anything.
      const [again, folder, pg, pgRestore, none, running, ...wrongSources] = await Promise.all([
        cli(['backup', file], { env }),
        cli(['backup', out, '--force'], { env }),
        cli(['backup', path.join(out, 'pg.db')], { env: postgres }),
        cli(['restore', file], { env: postgres }),
        cli(['backup', path.join(out, 'none.db'), '--data-dir', out], {}),
        cli(['restore', file], { env }),
        ...['empty', 'folder'].map((d) => cli(['backup', path.join(wrong, 'copy.db'), '--data-dir', path.join(wrong, d)])),
      ]);
      // Without --force an existing file is kept as it is.
      assert.equal(again.code, 2);
      assert.match(again.stderr, /already exists: choose another file, or pass --force to replace it/);
      assert.deepEqual(fs.readFileSync(file), before);
      // A folder, even with --force, is named as one (it failed with a raw EISDIR after the copy).
      assert.equal(folder.code, 2, folder.stderr);
      assert.match(folder.stderr, /is a folder: name the backup file, e\.g\. .*registry-backup\.db/);
      assert.equal(pg.code, 2);
      assert.match(pg.stderr, /PostgreSQL.*pg_dump/);
      // The README's command: with --clean alone, pg_restore into a new, empty database fails on every object it drops first.
      assert.equal(pgRestore.code, 2);
      assert.match(pgRestore.stderr, /Use pg_restore \(pg_restore --clean --if-exists --dbname="\$DATABASE_URL" registry\.dump, every replica stopped\)/);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /there is no registry database at .*registry\.db: point --data-dir/);
      // A registry.db that is empty, or a folder.
      assert.deepEqual(wrongSources.map((r) => r.code), [1, 2], wrongSources.map((r) => r.stderr).join(''));
      const pointDataDir = "point --data-dir (REGISTRY_DATA_DIR) at the registry's data directory\n";
      assert.deepEqual(wrongSources.map((r) => r.stderr), [
        `a2a-registry: ${wrong}/empty/registry.db is empty (0 bytes), not a registry database: ${pointDataDir}`,
        `a2a-registry: ${wrong}/folder/registry.db is a folder, not a registry database: ${pointDataDir}`,
      ]);

      // Restore: refused while the registry runs, and over a database without --force; then it
      // puts the copy in place, keeps the database it replaced, and the registry holds what the copy held.
      assert.equal(running.code, 1);
      assert.match(running.stderr, /a registry is running on .*registry\.db .*stop it, then restore/);
      await registry.close();
      const damaged = path.join(out, 'damaged.db');
      fs.writeFileSync(damaged, fs.readFileSync(file).subarray(0, 4096));
      const refusedDamaged = await cli(['restore', damaged, '--force'], { env });
      assert.notEqual(refusedDamaged.code, 0, refusedDamaged.stderr);
      // Not a backup at all: said what it is (SQLite read a device or an empty file as an empty
      // database, "an SQLite database but not a registry's"; a folder was "disk I/O error"). A
      // file read and found wrong is the restore failing (1), as validate of a file that is not
      // JSON; a folder cannot be read as a file at all (2, as validate's "is a directory").
      const empty = path.join(out, 'empty.db');
      fs.writeFileSync(empty, '');
      const text = path.join(out, 'notes.txt');
      fs.writeFileSync(text, 'not a database\n');
      const foreign = path.join(out, 'foreign.db');
      new Database(foreign).exec('CREATE TABLE t (x)').close();
      const notBackups = await Promise.all([ '/dev/zero', empty, text, out, foreign ].map((f) => cli(['restore', f, '--force'], { env })));
      assert.deepEqual(notBackups.map((r) => r.code), [1, 1, 1, 2, 1], notBackups.map((r) => r.stderr).join(''));
      assert.deepEqual(
        notBackups.map((r) => r.stderr),
        [
          "a2a-registry: /dev/zero is a character device, not a backup: give the file a2a-registry backup wrote\n",
          // As empty as what the README's repair (`sqlite3 registry.db .recover | sqlite3 recovered.db`) leaves when
          // sqlite3 cannot run .recover: said, with the repair that works, not only "a backup".
          `a2a-registry: ${empty} is empty (0 bytes), not a backup: give the file a2a-registry backup wrote; or, if it is a repair's output, the repair failed. ` +
            `A sqlite3 built without the sqlite_dbpage table (Debian 12's) fails on sqlite3 ${registry.dataDir}/registry.db .recover | sqlite3 ${empty} with "SQL logic error" and leaves ${empty} empty: ` +
            `recover with .dump instead, its closing ROLLBACK turned into COMMIT, sqlite3 ${registry.dataDir}/registry.db .dump | sed 's/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 ${empty}, ` +
            `or with a newer sqlite3; then restore ${empty} (README, Backups: "A damaged file (SQLite)")\n`,
          `a2a-registry: ${text} is not an SQLite database (it does not begin with "SQLite format 3"), so not a backup: give the file a2a-registry backup wrote\n`,
          `a2a-registry: ${out} is a folder, not a backup: give the file a2a-registry backup wrote\n`,
          `a2a-registry: ${foreign} is an SQLite database but not a registry's (it has no registry_migrations table)\n`,
        ],
      );
      const exists = await cli(['restore', file], { env });
      assert.equal(exists.code, 2);
      assert.match(exists.stderr, /registry\.db exists: pass --force to replace it/);
      // A record of damage found in the database (storage/sqlite/damage-record.ts) goes aside with it.
      const damageRecord = path.join(registry.dataDir, 'registry.db.damaged');
      fs.writeFileSync(damageRecord, '{}\n');
      // Run as root (sudo), the restore gives what it puts in place to the registry's user (the
      // owner of the database it replaces): root's 0600 file, the registry's user could not open
      // it and the registry did not start, right after "restored ... Start the registry".
      const asRoot = process.getuid?.() === 0;
      const registryUser = 65534;
      if (asRoot) for (const f of ['', ...fs.readdirSync(registry.dataDir)]) fs.chownSync(path.join(registry.dataDir, f), registryUser, registryUser);
      const restore = await cli(['restore', file, '--force', '--json'], { env });
      assert.equal(restore.code, 0, restore.stderr);
      if (asRoot) {
        const notTheUsers = (dir: string) => fs.readdirSync(dir).filter((f) => fs.statSync(path.join(dir, f)).uid !== registryUser || fs.statSync(path.join(dir, f)).gid !== registryUser);
        assert.deepEqual(notTheUsers(registry.dataDir), [], 'every file of the data directory is the registry user\'s');
        // A data directory the registry's user made and has not started in: the database and the
        // lock files the restore makes are the directory owner's (here, the restore's own function).
        const fresh = path.join(out, 'fresh');
        fs.mkdirSync(fresh, { mode: 0o700 });
        fs.chownSync(fresh, registryUser, registryUser);
        await restoreSqlite(file, path.join(fresh, 'registry.db'), { overwrite: false });
        assert.deepEqual(fs.readdirSync(fresh).sort(), ['registry.db', 'registry.db.import-lock', 'registry.db.lock']);
        assert.deepEqual(notTheUsers(fresh), [], 'every file the restore made is the registry user\'s');
      }
      const done = parse(restore);
      assert.equal(done.entries, summary.entries);
      assert.ok(fs.existsSync(done.replaced), 'the replaced database is kept');
      assert.ok(!fs.existsSync(damageRecord) && fs.existsSync(`${done.replaced}.damaged`), 'the damage record went aside with the database it describes');
      assert.equal(fs.statSync(path.join(registry.dataDir, 'registry.db')).mode & 0o777, 0o600);
      restored = await startTestRegistry({ REGISTRY_DATA_DIR: registry.dataDir });
      // Every page: the copy may hold more entries than one page (registrations went on during it).
      const names = new Set<string>();
      let pageToken: string | undefined;
      do {
        const page = await restored.service.search({ query: 'backed up agent', limit: 100, ...(pageToken ? { pageToken } : {}) }, { principal: 'admin', isAdmin: true });
        for (const hit of page.results) names.add(hit.name);
        pageToken = page.nextPageToken;
      } while (pageToken);
      assert.equal(names.size, summary.entries);
      for (let n = 0; n < 110; n++) assert.ok(names.has(`Backed up agent ${n}`), `agent ${n}`);
    } finally {
      await restored?.close();
      await registry.close();
    }
  });

  test('backup and restore read REGISTRY_DATA_DIR and DATABASE_URL alone: the image\'s HOST=0.0.0.0 without PUBLIC_URL, a bad PORT or a missing REGISTRY_ADMIN_TOKEN_FILE, which only serving needs, do not stop them; an empty DATABASE_URL is said', async () => {
    // In this process (the commands' own functions): what is tested is which settings they read.
    const registry = await startTestRegistry();
    const file = path.join(tempDir('a2a-registry-backup-'), 'b1.db');
    const serverOnly: Record<string, string | undefined> = { HOST: '0.0.0.0', PUBLIC_URL: undefined, PORT: 'abc', REGISTRY_ADMIN_TOKEN_FILE: '/missing/admin-token', DATABASE_URL: '', REGISTRY_DATA_DIR: undefined };
    const saved = Object.fromEntries(Object.keys(serverOnly).map((name) => [name, process.env[name]]));
    const setEnv = (values: Record<string, string | undefined>): void => {
      for (const [name, value] of Object.entries(values)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    };
    const run = async (command: (o: Output) => Promise<number>): Promise<{ code: number; err: string }> => {
      let err = '';
      const code = await command({ out: () => undefined, err: (text) => (err += text), color: false });
      return { code, err };
    };
    setEnv(serverOnly);
    try {
      assert.throws(() => loadConfig(), /invalid configuration: PORT must be a port number/, 'the registry itself refuses to serve so');
      const emptyDatabaseUrl = `a2a-registry: warning: DATABASE_URL is set but empty: taken as unset, so SQLite in ${registry.dataDir} (an unset shell variable?)\n`;
      const backedUp = await run((o) => backupCommand(file, { dataDir: registry.dataDir, force: false, json: false }, o));
      assert.equal(backedUp.code, 0, backedUp.err);
      assert.equal(backedUp.err, emptyDatabaseUrl);
      await registry.close();
      const restored = await run((o) => restoreCommand(file, { dataDir: registry.dataDir, force: true, json: true }, o));
      assert.equal(restored.code, 0, restored.err);
      assert.equal(restored.err, emptyDatabaseUrl);
      // What they read is checked as the registry checks it.
      process.env.REGISTRY_DATA_DIR = ` ${registry.dataDir}`;
      const spaced = await run((o) => backupCommand(path.join(path.dirname(file), 'b2.db'), { force: false, json: false }, o));
      assert.equal(spaced.code, 2);
      assert.match(spaced.err, /^a2a-registry: invalid configuration: REGISTRY_DATA_DIR begins or ends with whitespace/m);
    } finally {
      setEnv(saved);
      await registry.close();
    }
  });

  test('backup --force refuses every file of the running database (its -wal, -shm, -journal, lock, a link to one): written over, acknowledged writes were lost at the next crash; restore and migrate name them too', async () => {
    const registry = await startTestRegistry();
    try {
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      assert.equal(stateOf(await op(alice, { register: { agentCard: v1Card('Logged agent', 'https://logged.example.org/a2a') } })), 'TASK_STATE_COMPLETED');
      const database = path.join(registry.dataDir, 'registry.db');
      const wal = `${database}-wal`;
      const walBefore = fs.statSync(wal);
      const linkDir = tempDir();
      const linked = path.join(linkDir, 'looks-like-a-backup.db');
      fs.linkSync(wal, linked);
      const targets = [wal, `${database}-shm`, `${database}-journal`, `${database}.lock`, `${database}.import-lock`, linked];
      const runs = await Promise.all(targets.map((file) => cli(['backup', file, '--force', '--data-dir', registry.dataDir])));
      assert.deepEqual(runs.map((r) => r.code), [2, 2, 2, 2, 2, 2], runs.map((r) => r.stderr).join(''));
      const roles = ["the database's write-ahead log", "the database's shared-memory index", "the database's rollback journal", "the registry's process lock", 'the lock imports hold', "the database's write-ahead log"];
      runs.forEach((r, i) => assert.match(r.stderr, new RegExp(`^a2a-registry: ${targets[i]} is ${roles[i]}.*: give the backup a file outside the database's own`), r.stderr));
      const walAfter = fs.statSync(wal);
      assert.equal(walAfter.ino, walBefore.ino, 'the running registry\'s WAL was replaced');
      assert.ok(!fs.existsSync(`${database}-journal`), 'no journal was made for SQLite to roll back');
      // The registry still answers, with what it acknowledged.
      assert.equal(stateOf(await op(alice, { register: { agentCard: v1Card('Logged agent 2', 'https://logged-2.example.org/a2a') } })), 'TASK_STATE_COMPLETED');
      const [fromWal, migrate] = await Promise.all([
        cli(['restore', wal, '--force', '--data-dir', registry.dataDir]),
        cli(['migrate', '--from', wal, '--to', 'postgres://registry@127.0.0.1:1/registry']),
      ]);
      assert.equal(fromWal.code, 2, fromWal.stderr);
      assert.match(fromWal.stderr, /registry\.db-wal is the database's write-ahead log .*, not a backup: give the file a2a-registry backup wrote/);
      assert.equal(migrate.code, 2, migrate.stderr);
      assert.match(migrate.stderr, /registry\.db-wal is the database .*registry\.db's write-ahead log .*, not a database: give --from the data directory or .*registry\.db/);
    } finally {
      await registry.close();
    }
  });

  test('restore of a file rebuilt from a damaged database (sqlite3 .recover) leaves out the entries it holds only in part, so they can be registered again, as the README says', async () => {
    // What .recover or .dump reads back from a damaged file: an entry whose revision was on a lost
    // page (its row kept), and the revision and URLs of an entry whose row was. Restored as they
    // were, the first was shown nowhere yet held its identity (registering it again failed
    // INTERNAL, UNIQUE constraint, for good) and the second's URL claims stayed held.
    const damaged = tempDir();
    const store = createStore({ dataDir: damaged });
    await store.open();
    const urls = [1, 2, 3].map((n) => `https://recovered-${n}.example.org/a2a`);
    const ids: string[] = [];
    for (const url of urls) {
      const outcome = await store.upsert(entryWrite('agent', url), actor('alice'));
      assert.ok('entry' in outcome);
      ids.push(outcome.entry.id);
    }
    await store.close();
    const rebuilt = path.join(damaged, 'recovered.db');
    const db = new Database(path.join(damaged, 'registry.db'));
    try {
      db.prepare('VACUUM INTO ?').run(rebuilt);
    } finally {
      db.close();
    }
    const lossy = new Database(rebuilt);
    const keptClaims: string[] = [];
    try {
      // As the sqlite3 shell writes a file: no cascade (better-sqlite3 turns foreign keys on).
      lossy.pragma('foreign_keys = OFF');
      lossy.prepare('DELETE FROM entry_revisions WHERE entry_id = ?').run(ids[0]);
      lossy.prepare('DELETE FROM entries WHERE id = ?').run(ids[1]);
      // A kept entry's URL rows lost: its claims stay its owner's (they were released with the others').
      keptClaims.push(...(lossy.prepare('SELECT url FROM entry_urls WHERE entry_id = ?').pluck().all(ids[2]) as string[]));
      lossy.prepare('DELETE FROM entry_urls WHERE entry_id = ?').run(ids[2]);
    } finally {
      lossy.close();
    }
    const target = tempDir();
    const restore = await cli(['restore', rebuilt, '--data-dir', target]);
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(restore.stdout, /^restored 1 entry \(1 revision, change log at \d+\) from /);
    assert.match(restore.stdout, new RegExp(`\\nLeft out 2 entries the file holds only in part \\(its current revision, or the entry itself, is missing: lost with a damaged page\\): ${ids[0]}, ${ids[1]}\\. Register them again`));
    const restored = createStore({ dataDir: target });
    await restored.open();
    try {
      for (const url of urls.slice(0, 2)) {
        const again = await restored.upsert(entryWrite('agent', url), actor('bob'));
        assert.equal(again.status, 'created', `registering ${url} again: ${JSON.stringify(again)}`);
      }
      assert.equal((await restored.get(ids[2]!))?.identityUrl, urls[2], 'the whole entry stays');
    } finally {
      await restored.close();
    }
    assert.ok(keptClaims.length > 0);
    const claims = new Database(path.join(target, 'registry.db'), { readonly: true });
    try {
      for (const url of keptClaims) assert.equal(claims.prepare('SELECT owner FROM url_claims WHERE url = ?').pluck().get(url), 'alice', `the kept entry's claim of ${url}`);
    } finally {
      claims.close();
    }
  });

  test('restore from a crashed registry\'s database keeps the commits still in its -wal', async () => {
    // A registry that crashed (a recovered disk) leaves its last commits in registry.db-wal: the
    // restore copied registry.db alone, so an unregistration there came back, while its summary,
    // read through SQLite, counted the entries without it.
    const crashed = tempDir();
    const store = createStore({ dataDir: crashed });
    await store.open();
    for (const n of [1, 2]) await store.upsert(entryWrite('agent', `https://crashed-${n}.example.org/a2a`), actor('alice'));
    await store.close();
    const database = path.join(crashed, 'registry.db');
    const live = new Database(database);
    live.pragma('wal_autocheckpoint = 0');
    live.prepare("DELETE FROM entries WHERE identity_url = 'https://crashed-1.example.org/a2a'").run();
    // The files as the crash left them: copied while the connection holds the commit in its WAL.
    const recovered = tempDir();
    for (const suffix of ['', '-wal', '-shm']) fs.copyFileSync(`${database}${suffix}`, path.join(recovered, `registry.db${suffix}`));
    live.close();
    const target = tempDir();
    const restore = await cli(['restore', path.join(recovered, 'registry.db'), '--data-dir', target, '--json']);
    assert.equal(restore.code, 0, restore.stderr);
    assert.equal(parse(restore).entries, 1);
    const restored = new Database(path.join(target, 'registry.db'), { readonly: true });
    try {
      assert.deepEqual(restored.prepare('SELECT identity_url AS url FROM entries').all(), [{ url: 'https://crashed-2.example.org/a2a' }], 'the unregistered entry came back');
    } finally {
      restored.close();
    }
    assert.equal(fs.statSync(path.join(target, 'registry.db')).mode & 0o777, 0o600);
    // The text summaries count in the singular where there is one ("1 entries (1 revisions, ...").
    // Restored from the stopped registry's own registry.db (WAL mode, no -wal beside it, the
    // connection above closed cleanly): restore's read-only reads once left an empty -wal and -shm there.
    const again = tempDir();
    const [restoredText, backedUp] = await Promise.all([
      cli(['restore', database, '--data-dir', again]),
      cli(['backup', path.join(again, 'copy.db'), '--data-dir', target]),
    ]);
    assert.match(restoredText.stdout, /^restored 1 entry \(1 revision, change log at \d+\) from /, restoredText.stderr);
    assert.match(backedUp.stdout, /^backed up 1 entry \(1 revision, change log at \d+\) from /, backedUp.stderr);
    assert.deepEqual(['-wal', '-shm'].filter((s) => fs.existsSync(`${database}${s}`)), [], 'nothing written beside the file restored from');
  });

  test('a restore that cannot move the database aside (a file mounted on its own, as a container\'s volume can be: EBUSY) says it is as it was, and leaves no record of a half-done swap: the next start takes the database as before; refused part way (its -wal mounted), a start names the restore and what to do, and finishes it once fixed', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('a bind mount needs root');
    const dataDir = tempDir();
    const store = createStore({ dataDir });
    await store.open();
    await store.close();
    const database = path.join(dataDir, 'registry.db');
    // A stopped registry's database is a backup restore takes (and the quickest to make).
    const backup = path.join(tempDir(), 'backup.db');
    fs.copyFileSync(database, backup);
    try {
      execFileSync('mount', ['--bind', database, database], { stdio: 'pipe' });
    } catch (error) {
      return t.skip(`cannot bind-mount here: ${(error as Error).message.split('\n')[0]}`);
    }
    try {
      let err = '';
      const code = await restoreCommand(backup, { dataDir, force: true, json: false }, { out: () => undefined, err: (text) => (err += text), color: false });
      // It was "the restore stopped while it put its copy in place (EBUSY ...); registry.db.restore-unfinished
      // records how far it got": nothing had moved, yet every start then failed on the same rename, and check and import refused.
      assert.equal(code, 1, err);
      assert.match(err, /^a2a-registry: \S+registry\.db is as it was: the restore could not move it aside to put its copy in place \(EBUSY: [^)]*\) \(is registry\.db mounted on its own, as a container's file volume\? mount its folder instead\); fix that, then restore again\n$/);
      // Nothing for a start, an import or `check` to take for a half-done restore (each refused, or failed on the same rename).
      assert.deepEqual(fs.readdirSync(dataDir).filter((name) => /restore|replaced/.test(name)), [], 'no record, no copy, nothing moved aside');
    } finally {
      execFileSync('umount', [database]);
    }
    // Refused part way (the database moved aside, its -wal mounted on its own: the swap a restore
    // runs, run here without its copy's checks), the swap is half done; a start then refused with
    // "could not start: EBUSY: resource busy or locked, rename ...": now it names the restore and
    // what to do, and finishes it once that is fixed.
    const wal = `${database}-wal`;
    fs.writeFileSync(wal, '');
    execFileSync('mount', ['--bind', wal, wal]);
    try {
      const copy = `${database}.restore-${process.pid}.tmp`;
      fs.copyFileSync(backup, copy);
      assert.throws(() => swapIntoPlace(database, { copy, replaced: `${database}.replaced-test`, backup }), /EBUSY/);
      await assert.rejects(createStore({ dataDir, singleProcess: true }).open(), (error: Error) => {
        assert.match(error.message, /^a restore of \S+backup\.db into \S+registry\.db stopped half way \(\S+registry\.db\.restore-unfinished records it\), and finishing it failed: EBUSY: [^)]*registry\.db-wal[^)]*\. Fix that, then start the registry or run the restore again: either finishes it$/);
        return true;
      });
    } finally {
      execFileSync('umount', [wal]);
    }
    const finished = createStore({ dataDir, singleProcess: true });
    await finished.open();
    await finished.close();
    assert.deepEqual(fs.readdirSync(dataDir).filter((name) => /restore/.test(name)), [], 'finished: no record, no copy');
  });

  test('temporary files a backup, a restore (or a re-creation of the database) killed half way left are removed by the next backup to that file, the next restore and the registry at start; a live process\'s are kept', async () => {
    const registry = await startTestRegistry();
    const out = tempDir('a2a-registry-leftovers-');
    const backup = path.join(out, 'registry-backup.db');
    const env = { REGISTRY_DATA_DIR: registry.dataDir };
    const database = path.join(registry.dataDir, 'registry.db');
    // The pid of a process that has ended, and of one that runs (this one).
    const gone = execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const leave = (name: string) => {
      fs.writeFileSync(name, Buffer.alloc(256 * 1024, 1)); // as large as a database, in real life
      return name;
    };
    try {
      // A backup killed half way leaves its copy beside the file it was writing: the next one to that file removes it.
      const halfBackup = leave(`${backup}.${gone}.tmp`);
      const backedUp = await cli(['backup', backup], { env });
      assert.equal(backedUp.code, 0, backedUp.stderr);
      assert.match(backedUp.stdout, /Removed what an earlier backup to this file, stopped half way, had left: .*registry-backup\.db\.\d+\.tmp/);
      assert.deepEqual(fs.readdirSync(out), [path.basename(backup)]);
      assert.ok(!fs.existsSync(halfBackup));
      await registry.close();

      // Ctrl-C or SIGTERM while the copy is made: the copy goes, the command ends as the signal
      // ends a process (the shell says 130, 143), nothing is put in place. Before, Node's default
      // action ended it where it stood, its copy left beside the file or in the data directory.
      // The copy is held up by a lock on the database (a reader in exclusive mode), so the signal
      // always comes while it is in progress, and the command must end without waiting for it.
      const holder = new Database(database);
      try {
        holder.pragma('locking_mode = EXCLUSIVE');
        holder.prepare('SELECT count(*) FROM entries').get();
        const before = fs.readFileSync(database);
        const stoppedBackup = await interruptWhenCopying(['backup', path.join(out, 'stopped.db')], out, 'SIGINT', env);
        assert.equal(stoppedBackup.signal, 'SIGINT', stoppedBackup.stderr);
        assert.equal(stoppedBackup.stderr, `a2a-registry: the backup was interrupted (SIGINT): its temporary copy is removed, nothing was written to ${path.join(out, 'stopped.db')}\n`);
        assert.deepEqual(fs.readdirSync(out), [path.basename(backup)], 'no copy, no journal, no backup');
        const stoppedRestore = await interruptWhenCopying(['restore', backup, '--force'], registry.dataDir, 'SIGTERM', env);
        assert.equal(stoppedRestore.signal, 'SIGTERM', stoppedRestore.stderr);
        assert.equal(stoppedRestore.stderr, `a2a-registry: the restore was interrupted (SIGTERM): its temporary copy is removed, ${database} is as it was\n`);
        assert.deepEqual(fs.readdirSync(registry.dataDir).filter((f) => f.includes('.restore') || f.includes('.replaced')), [], 'no copy, nothing moved aside');
        assert.deepEqual(fs.readFileSync(database), before);
      } finally {
        holder.close();
      }
      const copy = leave(`${database}.restore-${gone}.tmp`);
      const recreation = leave(`${database}.restoring-${gone}`);
      const live = leave(`${database}.restoring-${process.pid}`);
      const restore = await cli(['restore', backup, '--force'], { env });
      assert.equal(restore.code, 0, restore.stderr);
      assert.match(restore.stdout, /Removed what an earlier restore, stopped half way, had left: .*registry\.db\.restore-\d+\.tmp/);
      assert.ok(!fs.existsSync(copy) && !fs.existsSync(recreation), 'the dead processes\' files are gone');
      assert.ok(fs.existsSync(live), 'a running process may still be writing its own');
      assert.deepEqual(
        fs.readdirSync(registry.dataDir).filter((f) => f.includes('.restor')),
        [path.basename(live)],
        'the restore left no file of its own',
      );
      // Nor an empty -wal and -shm beside the database it replaced, which it read (its watches' event numbers) before moving it aside.
      assert.deepEqual(fs.readdirSync(registry.dataDir).filter((f) => /-(wal|shm)$/.test(f)), [], 'no -wal or -shm beside the replaced database');
      fs.rmSync(live);
      // One left while the registry was stopped: it goes when the registry starts.
      const another = leave(`${database}.restoring-${gone}`);
      const restarted = await startTestRegistry(env);
      await restarted.close();
      assert.ok(!fs.existsSync(another), 'removed at start');
    } finally {
      await registry.close();
    }
  });
});
