/**
 * CPU time of one `a2a-registry` process per command: what a user waits for at every command,
 * and most of what the CLI's test files cost CI (they spawn the built CLI a few hundred times).
 *
 *   npx tsx bench/cli-cpu.ts [--rounds 5] [--compare <other checkout>] [--cache-ab] [--commands get,search,...]
 *
 * Each command runs once per round and variant, the variants alternating within a round (the
 * machine's load moves between runs); a first round warms the disk cache and Node's module
 * compile cache and is not counted. Variants: this checkout's bin/a2a-registry.js; with
 * --compare, also the other checkout's (built: `npm run build` there); with --cache-ab, each of
 * those also with NODE_DISABLE_COMPILE_CACHE=1. The CPU time of a run is the process's own
 * (user + system, every thread: process.cpuUsage() at exit, from a preload module), so it holds
 * start-up, module loading and the command; `serve` is timed from start to "registry listening"
 * and its SIGTERM shutdown.
 *
 * The remote commands talk to a registry this bench starts (`serve` of this checkout, its own
 * temporary data directory), holding the example agent card.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../test/support/built.js';
import { atLeastOne } from './lib/args.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    compare: { type: 'string' },
    'cache-ab': { type: 'boolean', default: false },
    commands: { type: 'string' },
  },
});

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-registry-cli-cpu-'));
const cpuFile = path.join(work, 'cpu.txt');
const preload = path.join(work, 'cpu-at-exit.mjs');
// Appends "<label>\t<ms>" when the process ends; the label comes from the environment.
fs.writeFileSync(
  preload,
  `import { appendFileSync } from 'node:fs';\n` +
    `process.on('exit', () => { const u = process.cpuUsage(); appendFileSync(${JSON.stringify(cpuFile)}, process.env.CLI_CPU_LABEL + '\\t' + (u.user + u.system) / 1000 + '\\n'); });\n`,
);

interface Variant {
  name: string;
  bin: string;
  env: Record<string, string>;
}

const checkouts = [{ name: 'this', root: REPO_ROOT }, ...(values.compare ? [{ name: 'compare', root: path.resolve(values.compare) }] : [])];
const variants: Variant[] = checkouts.flatMap(({ name, root }) => {
  const bin = path.join(root, 'bin/a2a-registry.js');
  if (!fs.existsSync(path.join(root, 'dist/src/cli/main.js'))) throw new Error(`${root} is not built: run npm run build there`);
  const on = { name, bin, env: {} };
  return values['cache-ab'] ? [on, { name: `${name} no-cache`, bin, env: { NODE_DISABLE_COMPILE_CACHE: '1' } }] : [on];
});

const TOKEN = 'bench-admin-token-0123456789abcdef';
const baseEnv: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('A2A_REGISTRY_') && k !== 'NODE_OPTIONS') baseEnv[k] = v;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI; `until` (a line of its stdout) ends a long-running one with SIGTERM. */
function run(bin: string, args: string[], env: Record<string, string>, until?: RegExp): Promise<Run> {
  const child = spawn(process.execPath, ['--import', preload, bin, ...args], { cwd: work, env: { ...baseEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    stdout += `${line}\n`;
    if (until?.test(line)) child.kill('SIGTERM');
  });
  // A command that hangs (a serve whose line never comes) fails the bench instead of stalling it.
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const example = (f: string): string => path.join(REPO_ROOT, 'examples', f);
const dataDir = path.join(work, 'data');
const registryEnv = { REGISTRY_TOKENS: `admin:${TOKEN}`, LOG_LEVEL: 'warn' };

// The registry the remote commands talk to, until this bench ends.
const server = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/a2a-registry.js'), 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'info'], {
  cwd: work,
  env: { ...baseEnv, ...registryEnv },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const registryUrl = await new Promise<string>((resolve, reject) => {
  server.on('exit', (code) => reject(new Error(`the registry exited (${code})`)));
  readline.createInterface({ input: server.stdout }).on('line', (line) => {
    const m = /"msg":"registry listening"/.test(line) ? /"url":"([^"]+)"/.exec(line) : null;
    if (m) resolve(m[1]!);
  });
});
const remote = { A2A_REGISTRY_URL: registryUrl, A2A_REGISTRY_TOKEN: TOKEN };
const registered = await run(variants[0]!.bin, ['register', example('agent-card.json'), '--json'], remote);
const id = (JSON.parse(registered.stdout) as { id?: string }).id;
if (!id) throw new Error(`could not register the example card: ${registered.stdout}${registered.stderr}`);
const backupFile = path.join(work, 'backup.db');
const keyFile = path.join(work, 'key.jwk.json');
const keyed = await run(variants[0]!.bin, ['keygen', '--private', keyFile, '--jwks', path.join(work, 'jwks.json')], {});
if (keyed.code !== 0) throw new Error(`keygen failed: ${keyed.stderr}`);
const importFile = path.join(work, 'import.jsonl');
fs.writeFileSync(importFile, [example('agent-card.json'), example('agent-card-v0.3.json')].map((f) => JSON.stringify(JSON.parse(fs.readFileSync(f, 'utf8')))).join('\n') + '\n');

interface Command {
  name: string;
  args: () => string[];
  env?: Record<string, string>;
  /** The exit code a correct run ends with. */
  code?: number;
  until?: RegExp;
}

let fresh = 0;
const freshDir = (): string => path.join(work, `fresh-${++fresh}`);
const COMMANDS: Command[] = [
  { name: '--help', args: () => ['--help'] },
  { name: 'get --help', args: () => ['get', '--help'] },
  { name: 'usage error', args: () => ['search', '--limit', '0', 'x'], code: 2 },
  { name: 'get', args: () => ['get', id], env: remote },
  { name: 'search', args: () => ['search', 'invoice'], env: remote },
  { name: 'ls', args: () => ['ls'], env: remote },
  { name: 'register', args: () => ['register', example('agent-card.json')], env: remote },
  { name: 'validate', args: () => ['validate', example('agent-card.json')] },
  { name: 'sign', args: () => ['sign', example('agent-card.json'), '--key', keyFile] },
  { name: 'backup', args: () => ['backup', backupFile, '--force', '--data-dir', dataDir] },
  { name: 'restore', args: () => ['restore', backupFile, '--force', '--data-dir', freshDir()] },
  { name: 'import', args: () => ['import', importFile, '--data-dir', freshDir()], env: registryEnv },
  { name: 'serve', args: () => ['serve', '--port', '0', '--log-level', 'info', '--data-dir', freshDir()], env: registryEnv, until: /"msg":"registry listening"/ },
];
const wanted = values.commands?.split(',').map((s) => s.trim());
const commands = wanted ? COMMANDS.filter((c) => wanted.includes(c.name)) : COMMANDS;

const rounds = atLeastOne(values.rounds);
const samples = new Map<string, number[]>();
try {
  for (let round = 0; round <= rounds; round++) {
    for (const command of commands) {
      for (const variant of round % 2 ? [...variants].reverse() : variants) {
        const label = `${command.name}\t${variant.name}`;
        fs.rmSync(cpuFile, { force: true });
        const r = await run(variant.bin, command.args(), { ...command.env, ...variant.env, CLI_CPU_LABEL: label }, command.until);
        if (r.code !== (command.code ?? 0) && !(command.until && r.code === null)) throw new Error(`${command.name} (${variant.name}) exited ${r.code}: ${r.stderr}`);
        const ms = Number(fs.readFileSync(cpuFile, 'utf8').trim().split('\t').at(-1));
        if (round > 0) samples.set(label, [...(samples.get(label) ?? []), ms]);
      }
    }
  }
} finally {
  server.kill('SIGTERM');
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`CPU ms per process (user + system), ${rounds} rounds; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log(['command'.padEnd(14), ...variants.map((v) => `${v.name} median (min)`.padStart(24))].join(''));
for (const command of commands) {
  const cells = variants.map((v) => {
    const xs = samples.get(`${command.name}\t${v.name}`) ?? [];
    return `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)})`.padStart(24);
  });
  console.log([command.name.padEnd(14), ...cells].join(''));
}
await new Promise((resolve) => server.once('close', resolve));
fs.rmSync(work, { recursive: true, force: true });
