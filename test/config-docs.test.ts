/**
 * The README's Configuration section is what operators configure the registry from: these checks
 * hold it to the settings schema (src/config/config.ts), so a setting added, renamed, given
 * another default or range, or made dependent on another, fails here until the documentation
 * says so; and the lists of error codes in docs/REGISTRY-CONTRACT.md and the README to the
 * ErrorCode union. Files and the schema only: no server, a few hundred milliseconds.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { DEPENDENT_SETTINGS, SETTINGS, settingSchema, type SettingName } from '../src/config/config.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string): string => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const README = read('README.md');

/** The README's Configuration section, up to the next section. */
function configurationSection(readme: string): string {
  const start = readme.indexOf('\n## Configuration\n');
  assert.notEqual(start, -1, 'the README has a "## Configuration" section');
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

interface SettingRow {
  /** The default column as written (`8080`, unset, derived from the tokens...). */
  default: string;
  meaning: string;
}

/** The rows `| \`NAME\` | default | meaning |` of the section's settings table. */
function settingRows(section: string): Map<string, SettingRow> {
  const rows = new Map<string, SettingRow>();
  for (const line of section.split('\n')) {
    const row = /^\| `([A-Z][A-Z0-9_]*)` \| (.*?) \| (.*) \|$/.exec(line);
    if (!row) continue;
    const [, name, byDefault, meaning] = row;
    assert.ok(!rows.has(name!), `the Configuration table lists ${name} twice`);
    rows.set(name!, { default: byDefault!, meaning: meaning! });
  }
  return rows;
}

const ROWS = settingRows(configurationSection(README));

/** The schema under its default, optional and preprocessing wrappers: what the value is checked by. */
function checkedBy(schema: z.ZodType): z.ZodType {
  let inner = schema;
  for (;;) {
    if (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
    else if (inner instanceof z.ZodPipe) inner = inner.out as z.ZodType;
    else return inner;
  }
}

/** A number's bounds as the schema checks them; undefined for a setting that is no number. */
function numberRange(name: SettingName): { min: number; max: number } | undefined {
  const inner = checkedBy(settingSchema(name));
  if (!(inner instanceof z.ZodNumber) || inner.minValue === null || inner.maxValue === null) return undefined;
  return { min: inner.minValue, max: inner.maxValue };
}

/** The default when it is a plain value (a number, a word, a boolean); undefined otherwise (none, or a list or map). */
function plainDefault(name: SettingName): string | undefined {
  const value: unknown = settingSchema(name).parse(undefined);
  return ['number', 'string', 'boolean'].includes(typeof value) ? String(value) : undefined;
}

/** The numbers a text states, as written in the README ("10,000", "0.5", "86400"). */
const numbersIn = (text: string): Set<number> => new Set([...text.matchAll(/(?<![\w.])\d{1,3}(?:,\d{3})+(?![\d])|(?<![\w.,])\d+(?:\.\d+)?(?![\w])/g)].map((m) => Number(m[0].replaceAll(',', ''))));

/**
 * Names in the documentation that look like settings and are not: each with why, so the list
 * stays short and a new one is a decision.
 */
const NOT_SETTINGS = new Map<string, string>([
  ['REGISTRY_URL', 'the shell variable the curl and SDK examples read the registry URL from (examples/sdk-search.ts)'],
  ['REGISTRY_AUTH', "an MCP client's own variable in its configuration example"],
  ['REGISTRY_PORT', 'the misspelling the "did you mean" warning is shown with'],
  ['REGISTRY_PUBLIC_REED', 'the misspelling the "did you mean" warning is shown with'],
  ['REGISTRY_SERVICE_HOST', 'a variable Kubernetes sets for a Service named registry, which start-up does not warn about'],
  ['REGISTRY_1_PUBLIC_URL', "compose.yaml's interpolation variable for the first replica's PUBLIC_URL, read by docker compose, not the registry"],
  ['REGISTRY_2_PUBLIC_URL', "compose.yaml's interpolation variable for the second replica's PUBLIC_URL"],
  ['REGISTRY_1_PUBLIC_GRPC_URL', "compose.yaml's interpolation variable for the first replica's PUBLIC_GRPC_URL"],
  ['REGISTRY_2_PUBLIC_GRPC_URL', "compose.yaml's interpolation variable for the second replica's PUBLIC_GRPC_URL"],
  ['REGISTRY_SEARCH_ENGINE', "docs/scaling.md's design of a PostgreSQL search index, not built: a setting it would add"],
]);

/** Where settings are named for operators: the README, docs/, the container files and the CLI's help and messages; each file's text by its path. */
function documentation(): Map<string, string> {
  const cli = readdirSync(path.join(REPO_ROOT, 'src/cli'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  const docs = readdirSync(path.join(REPO_ROOT, 'docs')).filter((file) => file.endsWith('.md'));
  const files = ['README.md', 'Dockerfile', 'compose.yaml', ...docs.map((file) => `docs/${file}`), ...cli.map((file) => `src/cli/${file}`)];
  return new Map(files.map((file) => [file, read(file)]));
}

const DOCUMENTATION = documentation();

test('every setting the schema reads has a row in the README\'s Configuration table, and every row is a setting', () => {
  const undocumented = SETTINGS.filter((name) => !ROWS.has(name));
  assert.deepEqual(undocumented, [], `settings missing from the README's Configuration table: ${undocumented.join(', ')}`);
  const unknown = [...ROWS.keys()].filter((name) => !(SETTINGS as readonly string[]).includes(name));
  assert.deepEqual(unknown, [], `rows of the README's Configuration table that are no setting of src/config/config.ts: ${unknown.join(', ')}`);
});

test('each row states the schema\'s default: the value itself where it is plain, no plain value where there is none', () => {
  const wrong: string[] = [];
  for (const name of SETTINGS) {
    const row = ROWS.get(name);
    if (!row) continue; // the test above names it
    const value = plainDefault(name);
    if (value !== undefined && row.default !== `\`${value}\``) wrong.push(`${name}: the README says ${row.default}, the schema \`${value}\``);
    // A setting without a default states what unset means (unset, `http://HOST:PORT`, `10` (at most ...)), never a bare number or boolean.
    if (value === undefined && /^`(\d[\d.]*|true|false)`$/.test(row.default)) wrong.push(`${name}: the README says ${row.default}, the schema has no default`);
  }
  assert.deepEqual(wrong, []);
});

/** Settings whose least value is another setting's consequence, which their row states instead of the schema's. */
const DERIVED_MINIMUM = new Map<SettingName, string>([['REGISTRY_MAX_BODY_BYTES', 'at least what a document of REGISTRY_MAX_DOCUMENT_BYTES needs (bodyLimits in config.ts)']]);

test('each number setting\'s row states the range the schema takes', () => {
  const wrong: string[] = [];
  for (const name of SETTINGS) {
    const range = numberRange(name);
    const row = ROWS.get(name);
    if (!range || !row) continue;
    const stated = numbersIn(row.meaning);
    const bounds = DERIVED_MINIMUM.has(name) ? [range.max] : [range.min, range.max];
    const missing = bounds.filter((bound) => !stated.has(bound));
    if (missing.length > 0) wrong.push(`${name} takes ${range.min} to ${range.max}; its row does not state ${missing.join(' or ')}`);
  }
  assert.deepEqual(wrong, []);
});

test('every REGISTRY_ name in the README, docs/, the Dockerfile, compose.yaml and the CLI is a setting (or a listed exception)', () => {
  const known = new Set<string>(SETTINGS);
  const unknown: string[] = [];
  for (const [file, text] of DOCUMENTATION) {
    for (const match of text.matchAll(/\bREGISTRY_[A-Z0-9_]*/g)) {
      const name = match[0];
      // A family written as a prefix (`REGISTRY_TASK_MEMORY_*`): some setting must start with it.
      const family = name.endsWith('_') && SETTINGS.some((setting) => setting.startsWith(name));
      if (!known.has(name) && !family && !NOT_SETTINGS.has(name)) unknown.push(`${file}: ${name}`);
    }
  }
  assert.deepEqual([...new Set(unknown)], [], 'names that are no setting: a rename not followed, or a setting never added (list a deliberate one in NOT_SETTINGS, saying why)');
  for (const name of NOT_SETTINGS.keys()) assert.ok(!known.has(name), `${name} is a setting now: take it out of NOT_SETTINGS`);
});

const MILLISECONDS_IN: Record<string, number> = { ms: 1, s: 1000, h: 3_600_000 };

/** The unit a setting is given in, by its name (REGISTRY_FETCH_TIMEOUT_MS: ms); seconds where the name says none. */
const settingUnit = (name: string): string => (name.endsWith('_MS') ? 'ms' : name.endsWith('_HOURS') ? 'h' : 's');

test('a default stated in prose ("`NAME` (10,000 by default)", "`NAME`, default 60 s") is the schema\'s', () => {
  const wrong: string[] = [];
  let checked = 0;
  const stated = /`?\b([A-Z][A-Z0-9_]+)`?(?:,| \()(?: default)? (\d(?:[\d,.]*\d)?)( ms| s| h)?(?: by default)?/g;
  for (const [file, source] of DOCUMENTATION) {
    for (const [phrase, name, written, unit] of source.replace(/\s+/g, ' ').matchAll(stated)) {
      if (!(SETTINGS as readonly string[]).includes(name!) || !phrase.includes('default')) continue;
      const value: unknown = settingSchema(name as SettingName).parse(undefined);
      let said: unknown = written;
      if (typeof value === 'number') {
        // "5 s" of a setting in milliseconds is 5000, "24 h" of one in seconds 86400.
        const number = Number(written!.replaceAll(',', ''));
        said = unit === undefined ? number : (number * MILLISECONDS_IN[unit.trim()]!) / MILLISECONDS_IN[settingUnit(name!)]!;
      } else if (typeof value !== 'string') continue;
      checked++;
      if (said !== value) wrong.push(`${file}: "${phrase}", but ${name}'s default is ${value}`);
    }
  }
  assert.ok(checked >= 10, `the prose's stated defaults were found (${checked})`);
  assert.deepEqual(wrong, []);
});

test('the README names every setting that acts only beside another, with what it needs', () => {
  const section = configurationSection(README);
  const start = section.search(/A\s+setting\s+that\s+acts\s+only\s+beside\s+another/);
  assert.notEqual(start, -1, 'the Configuration section says which settings act only beside another');
  const paragraph = section.slice(start, section.indexOf('\n\n', start));
  const unnamed = DEPENDENT_SETTINGS.flatMap((group) => [...group.settings, ...group.on]).filter((name) => !new RegExp(`\`${name}[\`=]`).test(paragraph));
  assert.deepEqual([...new Set(unnamed)], [], 'settings the start-up warning about ineffective settings covers, which the README\'s paragraph on them does not name (written out whole)');
});

/**
 * The codes a declined request's task can carry: every ErrorCode of src/contract/types.ts but the
 * registry-state refusals answered as protocol errors (no task: executor.ts's RETRY_LATER_CODES)
 * and INTERNAL (a FAILED task, the registry's own failure). Read from the source, so a code added
 * there fails here until both lists of codes name it.
 */
function rejectionCodes(): string[] {
  const types = read('src/contract/types.ts');
  const union = /export type ErrorCode =([\s\S]*?');/.exec(types); // to the last member's quote: comments hold semicolons
  assert.ok(union, 'src/contract/types.ts declares ErrorCode');
  const notTasks = new Set(['STORAGE_UNAVAILABLE', 'STARTING_UP', 'INTERNAL']);
  return [...union[1]!.matchAll(/\|\s*'([A-Z_]+)'/g)].map((m) => m[1]!).filter((code) => !notTasks.has(code));
}

test('the contract and the README name every code a declined request\'s task can carry', () => {
  const codes = rejectionCodes();
  assert.ok(codes.length >= 10, `the ErrorCode union was read (${codes.join(', ')})`);
  const contract = read('docs/REGISTRY-CONTRACT.md');
  const contractList = /Codes: (.*)/.exec(contract)?.[1];
  assert.ok(contractList, 'docs/REGISTRY-CONTRACT.md lists the codes of a declined request ("Codes: ...")');
  const readme = /A declined request ends `TASK_STATE_REJECTED`(.*)/.exec(README)?.[1];
  assert.ok(readme, "the README's contract section lists the codes of a declined request");
  const missing = (list: string) => codes.filter((code) => !list.includes(`\`${code}\``));
  assert.deepEqual(missing(contractList), [], 'codes missing from docs/REGISTRY-CONTRACT.md\'s "Codes:" list');
  assert.deepEqual(missing(readme), [], "codes missing from the README's list of a declined request's codes");
});

/**
 * The `code`s the CLI's `--json` error documents carry: the quoted names on the lines of src/cli
 * that set a code, comparisons (`code === 'EACCES'`, an errno read) and a declined task's state
 * (`new RegistryDeclined('REFUSED', ...)`) taken out. `${what.toUpperCase()}_FAILED` (backup's and
 * restore's) is no literal, so not read here.
 */
function cliErrorCodes(): Set<string> {
  const codes = new Set<string>();
  const files = readdirSync(path.join(REPO_ROOT, 'src/cli'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  for (const file of files) {
    for (const line of read(`src/cli/${file}`).split('\n')) {
      if (!/\bcode\b/.test(line) || /^\s*(\/\/|\*|\/\*)/.test(line)) continue;
      const setting = line.replace(/[!=]==\s*'[A-Z_]+'/g, '').replace(/RegistryDeclined\('[A-Z_]+'/g, '');
      for (const match of setting.matchAll(/'([A-Z][A-Z_]{2,})'/g)) codes.add(match[1]!);
    }
  }
  return codes;
}

test("the README names every code the CLI's --json error documents carry", () => {
  const codes = cliErrorCodes();
  assert.ok(codes.has('USAGE') && codes.has('UNREACHABLE') && codes.has('FILE_ERROR'), `the CLI's codes were read (${[...codes].join(', ')})`);
  const missing = [...codes].filter((code) => !README.includes(`\`${code}\``));
  assert.deepEqual(missing, [], "codes the CLI prints with --json that the README does not name (its \"For scripts\" paragraph lists the CLI's own)");
});

test("the README's Layout names every folder of src/ and every top-level source file", () => {
  const start = README.indexOf('\n## Layout\n');
  assert.notEqual(start, -1, 'the README has a "## Layout" section');
  const layout = README.slice(start, README.indexOf('\n## ', start + 1));
  const entries = readdirSync(path.join(REPO_ROOT, 'src'), { withFileTypes: true });
  const named = entries.map((entry) => (entry.isDirectory() ? `src/${entry.name}/` : `src/${entry.name}`)).filter((name) => name.endsWith('/') || name.endsWith('.ts'));
  assert.deepEqual(named.filter((name) => !layout.includes(`\`${name}\``)), [], 'parts of src/ the Layout section does not name');
});
