/**
 * The container set-up, tested without a Docker engine (none runs on CI's machines): the
 * Dockerfile's shape (stages, user, base image, health check), and its entry point run as the
 * image runs it (its CMD, its ENV) against the built dist/: the wildcard address refused until
 * PUBLIC_URL is set, the admin token read from a file, the HEALTHCHECK command passing and
 * failing. compose.yaml: two replicas of the image on the PostgreSQL service with one database,
 * one admin token and one page-token secret.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ADMIN_PRINCIPAL, ConfigError, loadConfig } from '../src/config/config.js';
import { BUILT_MAIN, REPO_ROOT, ensureBuilt } from './support/built.js';
import { resultOf, stateOf, type WireJson } from './support/client.js';
import { v1Card } from './support/documents.js';
import { rawPost, sendMessageBody, type RawAnswer } from './support/raw-http.js';
import { spawnRegistry, startTestRegistry, tempDir, type ChildRegistry } from './support/registry.js';

interface Instruction {
  keyword: string;
  args: string;
}

/** Instructions per stage, continuation lines joined, comments dropped. */
function dockerfileStages(text: string): Instruction[][] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Instruction[][] = [];
  for (const line of logical) {
    const [keyword, ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword!.toUpperCase(), args: rest.join(' ') };
    if (instruction.keyword === 'FROM') stages.push([]);
    stages.at(-1)?.push(instruction);
  }
  return stages;
}

const dockerfile = readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
const stages = dockerfileStages(dockerfile);
const runtime = stages.at(-1)!;
const one = (keyword: string): string => {
  const found = runtime.filter((i) => i.keyword === keyword);
  assert.equal(found.length, 1, `one ${keyword} in the final stage`);
  return found[0]!.args;
};
/** The final stage's ENV as a map (`ENV A=1 B=2` form). */
const imageEnv: Record<string, string> = Object.fromEntries(
  runtime.filter((i) => i.keyword === 'ENV').flatMap((i) => [...i.args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])),
);
const cmd = JSON.parse(one('CMD')) as string[];
const healthcheck = JSON.parse(one('HEALTHCHECK').replace(/^.*?CMD\s+/, '')) as string[];

function runHealthcheck(port: number | string): number | null {
  assert.equal(healthcheck[0], 'node');
  return spawnSync(process.execPath, healthcheck.slice(1), { env: { ...process.env, PORT: String(port) }, timeout: 10_000 }).status;
}

describe('Dockerfile', () => {
  test('multi-stage, non-root, a current LTS base that engines names, a health check, npm start as CMD', () => {
    assert.ok(stages.length >= 2, 'build stages apart from the runtime image');
    const baseImage = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    assert.ok(baseImage, 'the base image is one ARG');
    assert.ok(runtime[0]!.args === '${NODE_IMAGE}' && stages.every((s) => s[0]!.args.startsWith('${NODE_IMAGE}')), 'every stage on it');
    const major = /^node:(\d+)-/.exec(baseImage)?.[1];
    const engines = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string }; scripts: Record<string, string> });
    assert.ok(major && Number(major) % 2 === 0 && engines.engines.node.includes(`${major}.x`), `${baseImage}: an even (LTS) major that engines (${engines.engines.node}) states`);
    assert.equal(one('USER'), 'node');
    assert.match(one('HEALTHCHECK'), /--interval=\S+ .*CMD \[/);
    assert.deepEqual(cmd, ['node', BUILT_MAIN]);
    // npm start execs it: npm's shell would keep a SIGTERM from it (hardening-shutdown.test).
    assert.equal(engines.scripts.start, `exec ${cmd.join(' ')}`, 'the image starts the registry as npm start does');
    assert.equal(imageEnv.HOST, '0.0.0.0');
    assert.equal(imageEnv.PUBLIC_URL, undefined, 'the operator must say where the registry is reached');
    const copied = runtime.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    assert.ok(copied.some((c) => /^--from=build \S*dist\/web\s/.test(c)), `the image holds the built web page (dist/web): ${copied.join('; ')}`);
    // No source maps: they point at src/, which the image does not hold (as the npm package).
    const build = stages.find((stage) => stage.some((i) => i.keyword === 'RUN' && /\bnpm run build\b/.test(i.args)));
    assert.ok(build?.some((i) => i.keyword === 'RUN' && /npm run build && find dist -name '\*\.map' -delete/.test(i.args)), 'the build stage deletes the source maps before dist is copied');
    // Apache-2.0 §4(a): whoever gets the image gets the licence's text.
    assert.ok(copied.some((c) => !c.startsWith('--from') && c.split(/\s+/).slice(0, -1).includes('LICENSE')), `the image holds LICENSE: ${copied.join('; ')}`);
  });

  test('the npm package carries the licence its package.json names, and no source maps pointing at sources it does not ship', () => {
    const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { license: string };
    assert.equal(manifest.license, 'Apache-2.0');
    assert.match(readFileSync(path.join(REPO_ROOT, 'LICENSE'), 'utf8'), /^\s*Apache License\s+Version 2\.0, January 2004[\s\S]*END OF TERMS AND CONDITIONS[\s\S]*APPENDIX: How to apply the Apache License to your work/);
    ensureBuilt();
    const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(packed.status, 0, packed.stderr);
    const files = (JSON.parse(packed.stdout) as [{ files: { path: string }[] }])[0].files.map((f) => f.path);
    assert.ok(files.includes('LICENSE'), 'LICENSE is in the package');
    assert.ok(files.includes('dist/src/main.js'), 'the built registry is in the package');
    assert.deepEqual(files.filter((f) => f.endsWith('.map')), [], 'no source maps: they point at src/, which is not shipped');
  });

  const children: ChildRegistry[] = [];
  after(() => Promise.all(children.map((c) => c.stop('SIGKILL'))));

  test('its entry point with its environment refuses to advertise the wildcard address until PUBLIC_URL is set', () => {
    ensureBuilt();
    const env: Record<string, string> = { ...process.env, ...imageEnv, REGISTRY_DATA_DIR: tempDir() } as Record<string, string>;
    delete env.PUBLIC_URL;
    const refused = spawnSync(process.execPath, cmd.slice(1), { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 30_000 });
    assert.equal(refused.status, 2, refused.stderr);
    assert.match(refused.stderr, /HOST is 0\.0\.0\.0, which listens on every interface.*set PUBLIC_URL to the URL clients reach it at/);
    const wildcard = spawnSync(process.execPath, cmd.slice(1), { cwd: REPO_ROOT, env: { ...env, PUBLIC_URL: 'http://0.0.0.0:8080' }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(wildcard.status, 2, wildcard.stderr);
    assert.match(wildcard.stderr, /PUBLIC_URL must be an address peers can reach, not the wildcard 0\.0\.0\.0/);
  });

  test('with PUBLIC_URL and REGISTRY_ADMIN_TOKEN_FILE: advertises PUBLIC_URL, takes that token, passes its HEALTHCHECK', async () => {
    const secrets = tempDir();
    const token = 'admin-token-from-a-secret-0123456789';
    writeFileSync(path.join(secrets, 'admin-token'), `${token}\n`);
    const dataDir = tempDir();
    // Listening on 127.0.0.1 rather than the image's 0.0.0.0: tests stay on loopback.
    const registry = await spawnRegistry({
      ...imageEnv,
      HOST: '127.0.0.1',
      PORT: '0',
      PUBLIC_URL: 'https://registry.example.com',
      REGISTRY_DATA_DIR: dataDir,
      REGISTRY_ADMIN_TOKEN_FILE: path.join(secrets, 'admin-token'),
    });
    children.push(registry);
    const port = Number(new URL(registry.url).port);
    const card = (await (await fetch(`http://127.0.0.1:${port}/.well-known/agent-card.json`)).json()) as { supportedInterfaces: { url: string }[] };
    assert.ok(card.supportedInterfaces.every((i) => i.url.startsWith('https://registry.example.com/')), JSON.stringify(card.supportedInterfaces));
    const register = (bearer: string): Promise<RawAnswer> => {
      const body = sendMessageBody([{ data: { register: { agentCard: v1Card('Container Agent', 'https://container.example.org/a2a') } }, mediaType: 'application/json' }]);
      return rawPost(`http://127.0.0.1:${port}/a2a/jsonrpc`, body, { headers: { authorization: `Bearer ${bearer}` } });
    };
    const accepted = (await register(token)).json!.result.task as WireJson;
    assert.equal(stateOf(accepted), 'TASK_STATE_COMPLETED', JSON.stringify(accepted.status));
    assert.equal(resultOf(accepted).created, true);
    assert.equal((await register('not-the-admin-token-0123456789')).status, 401, 'any other token is refused');
    assert.ok(!registry.logs.some((l) => String(l.msg).includes('admin token is in')), 'no generated token beside the given one');
    assert.equal(runHealthcheck(port), 0);
    // PORT as the registry takes it, whitespace around it or a plus sign (" 8080" made no URL: never healthy).
    assert.equal(runHealthcheck(` ${port} `), 0);
    assert.equal(runHealthcheck(`+${port}`), 0);
    await registry.stop();
    assert.equal(runHealthcheck(port), 1, 'the health check fails when nothing answers');
  });
});

describe('compose.yaml', () => {
  interface Service {
    build?: string;
    image?: string;
    environment?: Record<string, string>;
    depends_on?: Record<string, { condition: string }>;
    secrets?: string[];
    healthcheck?: { test: string[] };
    ports?: string[];
    stop_grace_period?: string;
  }
  const compose = parseYaml(readFileSync(path.join(REPO_ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as {
    services: Record<string, Service>;
    secrets: Record<string, { environment?: string; file?: string }>;
  };

  test('two replicas of this image on the PostgreSQL service, with one database, admin token and page-token secret', () => {
    const replicas = Object.entries(compose.services).filter(([, s]) => s.build === '.');
    assert.equal(replicas.length, 2);
    const postgres = compose.services.postgres!;
    assert.match(postgres.image!, /^postgres:\d+$/);
    assert.ok(postgres.healthcheck?.test.join(' ').includes('pg_isready'));
    const env = replicas.map(([, s]) => s.environment!);
    for (const [name, s] of replicas) {
      assert.equal(s.depends_on?.postgres?.condition, 'service_healthy', name);
      assert.match(s.environment!.DATABASE_URL!, /^postgres:\/\/registry:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\/registry$/, name);
      assert.ok(s.secrets?.includes('registry-admin-token'), name);
      assert.equal(s.environment!.REGISTRY_ADMIN_TOKEN_FILE, '/run/secrets/registry-admin-token', name);
      assert.ok(s.environment!.PUBLIC_URL, `${name} says where it is reached`);
      assert.equal(s.environment!.GRPC_PORT, '50051', `${name} serves gRPC`);
      const grpcPort = /localhost:(\d+)\}$/.exec(s.environment!.PUBLIC_GRPC_URL ?? '')?.[1];
      assert.ok(s.ports!.includes(`${grpcPort}:50051`), `${name} advertises the gRPC port it publishes`);
    }
    assert.equal(env[0]!.DATABASE_URL, env[1]!.DATABASE_URL);
    assert.equal(env[0]!.REGISTRY_PAGE_TOKEN_SECRET, env[1]!.REGISTRY_PAGE_TOKEN_SECRET);
    assert.match(env[0]!.REGISTRY_PAGE_TOKEN_SECRET!, /^\$\{REGISTRY_PAGE_TOKEN_SECRET:\?/, 'required, not a default baked into the file');
    assert.notEqual(replicas[0]![1].ports![0], replicas[1]![1].ports![0]);
    assert.notEqual(replicas[0]![1].ports![1], replicas[1]![1].ports![1]);
    assert.equal(compose.secrets['registry-admin-token']?.environment, 'REGISTRY_ADMIN_TOKEN');
  });

  test('a stop gives each replica time to drain and save its index: 30 s, where Docker\'s default 10 s cut large ones short', () => {
    for (const [name, s] of Object.entries(compose.services).filter(([, service]) => service.build === '.')) {
      assert.equal(s.stop_grace_period, '30s', name);
      assert.equal(s.environment!.REGISTRY_SHUTDOWN_GRACE_SECONDS, undefined, `${name}: the default grace (5 s) fits inside it`);
    }
  });
});

describe('deployment configuration', () => {
  const base = { REGISTRY_DATA_DIR: '/nonexistent-data-dir' };
  const configError = (env: Record<string, string>, message: RegExp) =>
    assert.throws(() => loadConfig({ ...base, ...env }), (err: unknown) => err instanceof ConfigError && message.test(err.message));

  test('a wildcard listen address needs PUBLIC_URL; a wildcard PUBLIC_URL is refused', () => {
    for (const host of ['0.0.0.0', '::']) configError({ HOST: host }, new RegExp(`HOST is ${host.replace(/\./g, '\\.')}, which listens on every interface.*set PUBLIC_URL`));
    for (const url of ['http://0.0.0.0:8080', 'http://[::]:8080/']) configError({ PUBLIC_URL: url }, /PUBLIC_URL must be an address peers can reach, not the wildcard/);
    assert.equal(loadConfig({ ...base, HOST: '0.0.0.0', PUBLIC_URL: 'https://registry.example.com/' }).publicUrl, 'https://registry.example.com');
    assert.equal(loadConfig({ ...base, HOST: '::1', PORT: '9000' }).publicUrl, 'http://[::1]:9000');
  });

  test('the admin token from REGISTRY_ADMIN_TOKEN or REGISTRY_ADMIN_TOKEN_FILE, beside REGISTRY_TOKENS', () => {
    const admin = 'admin-token-given-by-the-operator';
    assert.deepEqual([...loadConfig({ ...base, REGISTRY_ADMIN_TOKEN: admin }).tokens], [[admin, ADMIN_PRINCIPAL]]);
    const file = path.join(tempDir(), 'token');
    writeFileSync(file, `${admin}\n`);
    const tokens = loadConfig({ ...base, REGISTRY_ADMIN_TOKEN_FILE: file, REGISTRY_TOKENS: 'alice:alice-token-0123456789abcdef' }).tokens;
    assert.deepEqual([...tokens].sort(), [[admin, ADMIN_PRINCIPAL], ['alice-token-0123456789abcdef', 'alice']]);
    configError({ REGISTRY_ADMIN_TOKEN: admin, REGISTRY_ADMIN_TOKEN_FILE: file }, /REGISTRY_ADMIN_TOKEN or REGISTRY_ADMIN_TOKEN_FILE, not both/);
    configError({ REGISTRY_ADMIN_TOKEN_FILE: `${file}.missing` }, /^invalid configuration: REGISTRY_ADMIN_TOKEN_FILE: .*\.missing does not exist; set REGISTRY_ADMIN_TOKEN_FILE to the path of a file whose first line is the admin token$/);
    configError({ REGISTRY_ADMIN_TOKEN: 'short-secret' }, /^invalid configuration: REGISTRY_ADMIN_TOKEN must be at least 16 characters$/);
    // A space inside a token: no Authorization header can carry it, so it could never be presented.
    const spaced = /contains whitespace, which no "Authorization: Bearer <token>" header can carry: a token is one word; remove the spaces$/;
    configError({ REGISTRY_ADMIN_TOKEN: 'admin token given by the operator' }, new RegExp(`^invalid configuration: REGISTRY_ADMIN_TOKEN ${spaced.source}`));
    configError({ REGISTRY_METRICS_TOKEN: 'metrics token for the scraper' }, new RegExp(`^invalid configuration: REGISTRY_METRICS_TOKEN ${spaced.source}`));
    configError({ REGISTRY_TOKENS: 'alice:alice token 0123456789' }, new RegExp(`^invalid configuration: REGISTRY_TOKENS gives "alice" a token that ${spaced.source}`));
    writeFileSync(file, 'admin token given by the operator\n');
    configError({ REGISTRY_ADMIN_TOKEN_FILE: file }, new RegExp(`^invalid configuration: the token on the first line of REGISTRY_ADMIN_TOKEN_FILE \\(.*\\) ${spaced.source}`));
    configError({ REGISTRY_ADMIN_TOKEN: admin, REGISTRY_TOKENS: `alice:${admin}` }, /also the token of "alice"/);
    configError({ REGISTRY_TOKENS: 'alice:short' }, /^invalid configuration: REGISTRY_TOKENS gives "alice" a token shorter than 16 characters$/);
    configError({ REGISTRY_TOKENS: 'alice:alice-token-0123456789,bob:alice-token-0123456789' }, /^invalid configuration: REGISTRY_TOKENS gives two principals one token: give each its own$/);
    configError({ HOST: ' 127.0.0.1' }, /^invalid configuration: HOST begins or ends with whitespace, which is no address to listen on \(a quoting mistake\?\): remove it \(got " 127\.0\.0\.1"\)$/);
    configError({ REGISTRY_EMBEDDINGS_URL: 'https://embeddings.example.com/v1', REGISTRY_EMBEDDINGS_MODEL: 'm'.repeat(201) }, /^invalid configuration: REGISTRY_EMBEDDINGS_MODEL must be at most 200 characters: the name of a model/);
  });

  test('a path setting that begins or ends with whitespace is refused: it named another place, relative to the working directory', () => {
    for (const name of ['REGISTRY_DATA_DIR', 'REGISTRY_ADMIN_TOKEN_FILE', 'REGISTRY_SYNONYMS', 'REGISTRY_INDEX_SNAPSHOT_DIR', 'REGISTRY_TRUSTED_KEYS', 'REGISTRY_SIGNING_KEY']) {
      for (const value of [' /data', '/data ', ' ']) {
        configError({ [name]: value }, new RegExp(`^invalid configuration: ${name} begins or ends with whitespace, which would name another file or directory \\(a quoting mistake\\?\\): remove it \\(got "${value}"\\)$`));
      }
    }
    assert.equal(loadConfig({ ...base, REGISTRY_DATA_DIR: '/var/lib/a2a registry' }).dataDir, '/var/lib/a2a registry');
  });

  test('numbers are written the plain way: PORT=0x50 or 1e3 is refused, not read as 80 or 1000', () => {
    for (const port of ['0x50', '1e3', '80abc', 'eighty']) configError({ PORT: port }, /^invalid configuration: PORT must be a port number/);
    configError({ REGISTRY_MAX_BODY_BYTES: '0x10000' }, /REGISTRY_MAX_BODY_BYTES must be a whole number/);
    assert.equal(loadConfig({ ...base, PORT: ' 8081 ' }).port, 8081);
    assert.equal(loadConfig({ ...base, REGISTRY_MAX_JSON_DEPTH: '32' }).hardening.maxJsonDepth, 32);
    configError({ REGISTRY_MAX_JSON_DEPTH: '8' }, /REGISTRY_MAX_JSON_DEPTH must be a whole number from 16 to 1000/);
  });

  test('cache lifetimes, retention hours and the search cache say what they take, not what zod expected', () => {
    for (const name of ['REGISTRY_CARD_MAX_AGE', 'REGISTRY_CATALOG_MAX_AGE']) {
      for (const value of ['-1', 'abc', '1.5', '100000']) {
        configError({ [name]: value }, new RegExp(`^invalid configuration: ${name} must be a whole number of seconds from 0 to 86400 \\(one day\\) \\(got "${value.replace('.', '\\.')}"\\); e\\.g\\. ${name}=\\d+ \\(the default\\)$`));
      }
      assert.equal(loadConfig({ ...base, [name]: '0' })[name === 'REGISTRY_CARD_MAX_AGE' ? 'cardMaxAgeSeconds' : 'catalogMaxAgeSeconds'], 0);
    }
    for (const name of ['REGISTRY_TASK_RETENTION_HOURS', 'REGISTRY_CHANGES_RETENTION_HOURS']) {
      for (const value of ['0', '-1', 'abc', '9000']) configError({ [name]: value }, new RegExp(`^invalid configuration: ${name} must be a number of hours above 0 \\(fractions allowed\\), at most 8760`));
    }
    assert.equal(loadConfig({ ...base, REGISTRY_TASK_RETENTION_HOURS: '0.5' }).taskRetention.maxAgeMs, 1_800_000);
    assert.equal(loadConfig(base).connections.sseHeartbeatMs, 15_000);
    assert.equal(loadConfig({ ...base, REGISTRY_SSE_HEARTBEAT_SECONDS: '2.5' }).connections.sseHeartbeatMs, 2_500);
    for (const value of ['0', '0.1', '301', 'often']) configError({ REGISTRY_SSE_HEARTBEAT_SECONDS: value }, /^invalid configuration: REGISTRY_SSE_HEARTBEAT_SECONDS must be seconds from 0\.5 to 300 /);
    assert.equal(loadConfig(base).connections.shutdownGraceMs, 5_000, 'drain and index save fit Docker\'s default stop timeout (10 s)');
    assert.equal(loadConfig({ ...base, REGISTRY_SHUTDOWN_GRACE_SECONDS: '0' }).connections.shutdownGraceMs, 0);
    assert.equal(loadConfig({ ...base, REGISTRY_SHUTDOWN_GRACE_SECONDS: '2.5' }).connections.shutdownGraceMs, 2_500);
    for (const value of ['-1', '3601', 'soon']) configError({ REGISTRY_SHUTDOWN_GRACE_SECONDS: value }, /^invalid configuration: REGISTRY_SHUTDOWN_GRACE_SECONDS must be seconds from 0 to 3600 /);
    for (const value of ['-1', '1.5', 'x']) configError({ REGISTRY_SEARCH_CACHE_ENTRIES: value }, /^invalid configuration: REGISTRY_SEARCH_CACHE_ENTRIES must be a whole number of answers from 0 \(off\) to 1000000/);
  });

  test('a body limit too small for a document at the document limit is refused, naming both settings', () => {
    configError({ REGISTRY_MAX_BODY_BYTES: '2000' }, /^invalid configuration: REGISTRY_MAX_BODY_BYTES must be at least 17752 \(got "2000"\): a document of REGISTRY_MAX_DOCUMENT_BYTES \(10240\) travels base64-encoded/);
    configError({ REGISTRY_MAX_BODY_BYTES: '20000', REGISTRY_MAX_DOCUMENT_BYTES: '20000' }, /REGISTRY_MAX_BODY_BYTES must be at least 30764 .*lower REGISTRY_MAX_DOCUMENT_BYTES$/);
    assert.equal(loadConfig({ ...base, REGISTRY_MAX_BODY_BYTES: '17752' }).maxBodyBytes, 17752);
    assert.equal(loadConfig({ ...base, REGISTRY_MAX_BODY_BYTES: '5432', REGISTRY_MAX_DOCUMENT_BYTES: '1000' }).maxBodyBytes, 5432);
  });

  test('a misspelt REGISTRY_ setting is named at start-up, with the one it likely meant, rather than silently ignored', async () => {
    assert.deepEqual(loadConfig({ ...base, REGISTRY_PUBLIC_READ: 'false' }).warnings, []);
    const registry = await spawnRegistry({ REGISTRY_DATA_DIR: tempDir(), REGISTRY_PUBLIC_REED: 'false', REGISTRY_PASSWORD: 'for-a-container-registry' });
    try {
      const warnings = registry.logs.filter((l) => l.level === 40).map((l) => String(l.msg));
      assert.ok(
        warnings.includes("REGISTRY_PUBLIC_REED is not a setting of the registry and is ignored (did you mean REGISTRY_PUBLIC_READ?); the settings are listed in the README's Configuration section"),
        JSON.stringify(warnings),
      );
      assert.ok(warnings.some((w) => w.startsWith('REGISTRY_PASSWORD is not a setting of the registry and is ignored;')), JSON.stringify(warnings));
      assert.ok(!warnings.join('\n').includes('for-a-container-registry'), 'values are never shown');
    } finally {
      await registry.stop();
    }
  });

  test('a yes/no setting takes true or false, and says which other spellings it takes (1/0, yes/no, which it reads too)', () => {
    assert.equal(loadConfig({ ...base, REGISTRY_PROBE: 'yes' }).freshness.probe, true);
    assert.equal(loadConfig({ ...base, REGISTRY_PROBE: '0' }).freshness.probe, false);
    configError({ REGISTRY_PROBE: 'on' }, /^invalid configuration: REGISTRY_PROBE must be true or false \(or 1\/0, yes\/no\)/);
  });

  test('an address or port it cannot listen on stops start-up naming HOST or PORT', async () => {
    await assert.rejects(startTestRegistry({ HOST: '192.0.2.1' }), /HOST 192\.0\.2\.1 is no address of this machine: set HOST/);
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as net.AddressInfo;
      await assert.rejects(startTestRegistry({ PORT: String(port) }), new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use: stop what uses it, or set PORT`));
    } finally {
      taken.close();
    }
  });

  test('a REGISTRY_INDEX_SNAPSHOT_DIR that cannot be a directory stops start-up naming it (every save failed with a bare EEXIST, every start re-indexed)', async () => {
    await assert.rejects(
      startTestRegistry({ REGISTRY_INDEX_SNAPSHOT_DIR: '/etc/passwd' }),
      /REGISTRY_INDEX_SNAPSHOT_DIR \(by default REGISTRY_DATA_DIR\): \/etc\/passwd cannot hold the saved search index \(EEXIST.*set REGISTRY_INDEX_SNAPSHOT_SECONDS=0 to not save the index/,
    );
  });

  test('configuration errors never print a secret: a REGISTRY_TOKENS item without a colon, the password of a database URL', () => {
    const refused = (env: Record<string, string>): string => {
      try {
        loadConfig({ ...base, ...env });
      } catch (err) {
        if (err instanceof ConfigError) return err.message;
      }
      assert.fail(`${JSON.stringify(env)} was accepted`);
    };
    const noColon = refused({ REGISTRY_TOKENS: 'alice:alice-token-0123456789,bobtok-bob-0123456789ab' });
    assert.match(noColon, /REGISTRY_TOKENS item 2 is not principal:token/);
    assert.doesNotMatch(noColon, /bob-0123456789ab/);
    const database = refused({ DATABASE_URL: 'mysql://u:supersecret@db.example/registry' });
    assert.match(database, /DATABASE_URL .*\(got "mysql:\/\/u:\*\*\*@db\.example\/registry"\)/);
    assert.doesNotMatch(database, /supersecret/);
  });
});
