/**
 * A throwaway PostgreSQL server for tests.
 *
 * Finds the server binaries under /usr/lib/postgresql/<version>/bin, copies what `initdb` made
 * (once per binaries, kept in the temporary directory as registry-pg-template-*) into a
 * temporary directory owned by the `postgres` OS user (PostgreSQL refuses to run as root, and
 * the tests do), and starts it on 127.0.0.1 and a free port, with its unix socket inside the
 * temporary directory so it cannot collide with a system cluster. `fsync` stays on: the
 * durability tests are only meaningful against a server that really flushes.
 *
 * With TEST_DATABASE_URL set, that server is used instead (stop/restart are then unavailable).
 * TEST_POSTGRES_BIN points at server binaries outside /usr/lib/postgresql.
 *
 * Without binaries: on CI (`CI` set) `startPostgres` throws, so a broken CI image fails loudly;
 * elsewhere it returns a reason to skip, for the test files to report.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before } from 'node:test';
import pg from 'pg';
import { freePort } from './ports.js';

const run = promisify(execFile);

export interface TestPostgres {
  /** Connection URL of the `postgres` database (superuser, trust auth on 127.0.0.1). */
  url: string;
  /** Whether stop()/restart() can control the server (false with TEST_DATABASE_URL). */
  controllable: boolean;
  /** Creates an empty database and returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** Stops the server (immediate shutdown: nothing of it is kept) and deletes its data directory. */
  stop(): Promise<void>;
  /** Stops and starts the server again on the same port and data directory. */
  restart(options?: { downMs?: number }): Promise<void>;
  /** Stops the server, leaving the data directory, for tests that watch clients fail. */
  halt(): Promise<void>;
  /** Starts a halted server again. */
  resume(): Promise<void>;
}

/** A test file's PostgreSQL server, from `usePostgres`. */
export interface FilePostgres {
  /** Why this file's PostgreSQL tests are skipped (no server binaries), or undefined. Read it in tests, not at load time. */
  readonly skipReason: string | undefined;
  /** The running server; only when not skipped. */
  readonly server: TestPostgres;
}

/**
 * The PostgreSQL server of a test file, in the file's top-level hooks: started before its tests
 * (or the reason to skip them recorded), stopped after them. `setUp` runs once it is started
 * (e.g. create a database and start replicas on it), `tearDown` before it stops (close them
 * first, so nothing talks to a stopping server). Call it once, at the top level of the file.
 */
export function usePostgres(hooks: { setUp?: (server: TestPostgres) => Promise<void>; tearDown?: () => Promise<void> } = {}): FilePostgres {
  let server: TestPostgres | undefined;
  let skipReason: string | undefined;
  before(async () => {
    const started = await startPostgres();
    if (!started.ok) {
      skipReason = started.skipReason;
      return;
    }
    server = started.pg;
    await hooks.setUp?.(server);
  });
  after(async () => {
    try {
      await hooks.tearDown?.();
    } finally {
      await server?.stop();
    }
  });
  return {
    get skipReason() {
      return skipReason;
    },
    get server() {
      if (!server) throw new Error(`PostgreSQL is not running${skipReason ? `: ${skipReason}` : ''}`);
      return server;
    },
  };
}

export type StartResult = { ok: true; pg: TestPostgres } | { ok: false; skipReason: string };

/**
 * The newest installed PostgreSQL's bin directory, or undefined. TEST_POSTGRES_BIN names
 * another directory (e.g. a Homebrew or source install) instead of searching.
 */
export function findPostgresBin(): string | undefined {
  const override = process.env.TEST_POSTGRES_BIN;
  if (override) return existsSync(join(override, 'initdb')) ? override : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => /^\d+(\.\d+)?$/.test(name) && existsSync(join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

async function uidOf(user: string): Promise<{ uid: number; gid: number }> {
  const { stdout: uid } = await run('id', ['-u', user]);
  const { stdout: gid } = await run('id', ['-g', user]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/**
 * `settings`: extra server settings (name → value), e.g. a benchmark's production-sized
 * `shared_buffers`; the tests' defaults suit many small databases.
 */
export async function startPostgres(options: { settings?: Record<string, string> } = {}): Promise<StartResult> {
  const external = process.env.TEST_DATABASE_URL;
  if (external) return { ok: true, pg: externalServer(external) };

  const bin = findPostgresBin();
  if (!bin) {
    const reason =
      `PostgreSQL server binaries not found ${process.env.TEST_POSTGRES_BIN ? `in ${process.env.TEST_POSTGRES_BIN}` : 'under /usr/lib/postgresql/*/bin'} ` +
      '(install the `postgresql` package, e.g. with .ci/pg-setup.sh, or set TEST_DATABASE_URL).';
    if (process.env.CI) throw new Error(`CI is set, so PostgreSQL tests must run: ${reason}`);
    return { ok: false, skipReason: reason };
  }

  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'registry-pg-'));
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const port = await freePort();
  // PostgreSQL will not run as root: hand the directory to the postgres user and run the
  // server binaries through runuser.
  let prefix: string[] = [];
  if (asRoot) {
    const { uid, gid } = await uidOf('postgres');
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
    prefix = ['runuser', '-u', 'postgres', '--'];
  }
  const command = (cmd: string, args: string[]): [string, string[]] => {
    const full = [...prefix, join(bin, cmd), ...args];
    return [full[0]!, full.slice(1)];
  };
  const exec = async (cmd: string, args: string[]): Promise<void> => {
    const [file, fileArgs] = command(cmd, args);
    await run(file, fileArgs, { timeout: 60_000 });
  };

  const initdb = (into: string): Promise<void> =>
    exec('initdb', [
      '-D', into,
      '-U', 'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C',
      '--no-instructions',
      // Skips flushing the new data directory to disk, as PostgreSQL's own regression tests do:
      // a crash of the machine, the only thing the flush guards against, ends the test anyway.
      // The server's own writes are flushed as usual (fsync=on below).
      '--no-sync',
    ]);
  // initdb's output, the same for every server of these binaries, is made once and copied for
  // each (about 1 s of CPU and several of waiting saved per server; 18 test files start one):
  // kept in the temporary directory for the next server, as tsx and Node keep their caches there.
  const template = join(
    tmpdir(),
    `registry-pg-template-${process.getuid?.() ?? 0}-${createHash('sha256').update(`${bin}\0${statSync(join(bin, 'initdb')).mtimeMs}`).digest('hex').slice(0, 16)}`,
  );
  const copyTemplate = async (): Promise<void> => {
    if (!existsSync(template)) {
      // Made in a folder of its own, then moved into place whole: files starting at once each
      // make one, the first moved in is kept, and no server is copied from half of one.
      const staging = mkdtempSync(join(tmpdir(), 'registry-pg-staging-'));
      try {
        if (asRoot) {
          const { uid, gid } = await uidOf('postgres');
          chownSync(staging, uid, gid);
        }
        await initdb(join(staging, 'data'));
        try {
          renameSync(join(staging, 'data'), template);
        } catch (err) {
          if (!existsSync(template)) throw err;
        }
      } finally {
        rmSync(staging, { recursive: true, force: true });
      }
    }
    // cp -a keeps the postgres user's ownership and the 0700 the server insists on.
    await run('cp', ['-a', template, dataDir], { timeout: 60_000 });
  };
  // Where the template cannot be made or copied, initdb makes this server's own, as before.
  const copied = await copyTemplate().then(
    () => true,
    () => false,
  );
  if (!copied) {
    rmSync(dataDir, { recursive: true, force: true });
    await initdb(dataDir);
  }
  const serverOptions = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    '-c fsync=on',
    '-c max_connections=200',
    // Tests create and drop many small databases; keep checkpoints from dominating.
    '-c shared_buffers=32MB',
    ...Object.entries(options.settings ?? {}).map(([name, value]) => `-c ${name}=${value}`),
  ].join(' ');
  const start = (): Promise<void> =>
    exec('pg_ctl', ['-D', dataDir, '-l', logFile, '-o', serverOptions, '-w', '-t', '30', 'start']);
  const stopServer = async (mode: 'fast' | 'immediate'): Promise<void> => {
    await exec('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '30', 'stop']);
  };
  try {
    await start();
  } catch (err) {
    if (!copied) throw err;
    // A template a cleaner of the temporary directory took files from (it outlives the run):
    // this server's data directory made by initdb instead, and the template made again by the next.
    rmSync(template, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
    await initdb(dataDir);
    await start();
  }
  let running = true;
  // If the test process dies without calling stop(), do not leave a server running: stop it
  // synchronously on exit (an 'exit' handler cannot await).
  const stopOnExit = (): void => {
    if (!running) return;
    try {
      const [file, args] = command('pg_ctl', ['-D', dataDir, '-m', 'immediate', 'stop']);
      execFileSync(file, args, { stdio: 'ignore', timeout: 10_000 });
    } catch {
      // best effort
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopOnExit);

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const server: TestPostgres = {
    url,
    controllable: true,
    createDatabase: (namePrefix) => createDatabase(url, namePrefix),
    async stop() {
      process.removeListener('exit', stopOnExit);
      // Immediate: the data directory is deleted next, so the shutdown checkpoint a fast stop
      // writes (and flushes) first would be thrown away.
      if (running) await stopServer('immediate').catch(() => undefined);
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
    async halt() {
      await stopServer('fast');
      running = false;
    },
    async resume() {
      await start();
      running = true;
    },
    async restart(options) {
      await server.halt();
      if (options?.downMs) await new Promise((r) => setTimeout(r, options.downMs));
      await server.resume();
    },
  };
  return { ok: true, pg: server };
}

let dbCounter = 0;

async function createDatabase(adminUrl: string, prefix = 'test'): Promise<string> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${dbCounter++}`.toLowerCase();
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}" TEMPLATE template0`);
  } finally {
    await client.end();
  }
  const target = new URL(adminUrl);
  target.pathname = `/${name}`;
  return target.toString();
}

function externalServer(url: string): TestPostgres {
  const unsupported = async (): Promise<void> => {
    throw new Error('TEST_DATABASE_URL is set: this test cannot stop or restart that server.');
  };
  return {
    url,
    controllable: false,
    createDatabase: (prefix) => createDatabase(url, prefix),
    stop: async () => undefined,
    halt: unsupported,
    resume: unsupported,
    restart: unsupported,
  };
}
