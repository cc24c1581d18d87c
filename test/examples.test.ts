/**
 * What the README and examples/ show a user works as written: every ```ts block of the README
 * typechecks under the project's strict settings (as its own module, beside node_modules), and
 * the runnable examples run against the registry REGISTRY_URL names.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import ts from 'typescript';
import { withoutPassword } from '../src/lib/url-password.js';
import { op, resultOf, sdkClient } from './support/client.js';
import { REPO_ROOT, TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

/** The ```ts blocks of a Markdown text, in order. */
function typescriptBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

function typecheck(files: Map<string, string>): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(REPO_ROOT, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  assert.ok(config);
  const options: ts.CompilerOptions = { ...config.options, noEmit: true };
  const host = ts.createCompilerHost(options);
  const readDisk = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) => {
    const text = files.get(name);
    return text === undefined ? readDisk(name, language, ...rest) : ts.createSourceFile(name, text, language);
  };
  host.fileExists = (name) => files.has(name) || ts.sys.fileExists(name);
  host.readFile = (name) => files.get(name) ?? ts.sys.readFile(name);
  const program = ts.createProgram([...files.keys()], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => !d.file || files.has(d.file.fileName))
    .map((d) => {
      const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      const at = d.file && where ? `${path.basename(d.file.fileName)}:${where.line + 1}:${where.character + 1}: ` : '';
      return `${at}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
}

test('every TypeScript snippet of the README compiles under strict tsc', () => {
  const blocks = typescriptBlocks(readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'));
  assert.ok(blocks.length > 0, 'the README has ```ts blocks');
  // Virtual files in the repository root, so that imports resolve from node_modules as they would
  // in a user's project; `export {}` keeps each a module of its own.
  const files = new Map(blocks.map((code, i) => [path.join(REPO_ROOT, `README.snippet-${i + 1}.ts`), `${code}\nexport {};\n`]));
  assert.deepEqual(typecheck(files), []);
});

/** The commands of the ```sh blocks of a Markdown text: one per line, comments dropped, continuations joined. */
function shellCommands(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap((m) =>
    m[1]!
      .replace(/\\\n/g, ' ')
      .split('\n')
      .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
      .filter((line) => line !== ''),
  );
}

test('no shell recipe of the README or docs/ gives the CLI a secret on its command line, which the CLI warns about (the process list, the shell history)', () => {
  const warned: string[] = [];
  for (const doc of ['README.md', 'docs/scaling.md', 'docs/benchmarks.md']) {
    for (const command of shellCommands(readFileSync(path.join(REPO_ROOT, doc), 'utf8'))) {
      if (!/\ba2a-registry(\.js)?\s/.test(command)) continue;
      // As src/cli/password-flags.ts warns: any --token, and a database URL flag whose URL holds a password.
      if (/(^|\s)--token[\s=]/.test(command)) warned.push(`${doc}: ${command}`);
      for (const m of command.matchAll(/(?:^|\s)--(?:to|database-url)[\s=]+(\S+)/g)) {
        if (withoutPassword(m[1]!) !== m[1]) warned.push(`${doc}: ${command}`);
      }
    }
  }
  assert.deepEqual(warned, [], 'give the token in A2A_REGISTRY_TOKEN and the URL in DATABASE_URL, as the CLI\'s warning says');
});

test('the typecheck above fails on a snippet that does not compile (it can fail)', () => {
  const files = new Map([[path.join(REPO_ROOT, 'README.snippet-broken.ts'), "import { ClientFactory } from '@a2a-js/sdk/client';\nconst n: number = new ClientFactory();\nexport {};\n"]]);
  assert.equal(typecheck(files).length, 1);
});

let registry: TestRegistry;
before(async () => {
  registry = await startTestRegistry();
  const alice = await sdkClient(registry.url, { token: TOKENS.alice });
  const card = JSON.parse(readFileSync(path.join(REPO_ROOT, 'examples/agent-card.json'), 'utf8')) as unknown;
  assert.equal(resultOf(await op(alice, { register: { agentCard: card } })).created, true);
});
after(() => registry.close());

test('examples/sdk-search.ts searches the registry named by REGISTRY_URL', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/sdk-search.ts', 'invoice'], {
    cwd: REPO_ROOT,
    env: { ...process.env, REGISTRY_URL: registry.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^[1-9]\d* match\(es\) for "invoice"$/m);
  assert.match(stdout, /^ {2}Invoice Assistant {2}[0-9a-f-]{36}$/m);
  assert.match(stdout, /^streamed in [1-9]\d* chunk\(s\)$/m);
});
