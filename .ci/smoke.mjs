// Usage: node .ci/smoke.mjs <installed folder> <agent card>. Starts the registry there with
// `npm start` on 127.0.0.1 (a free port), waits until it is ready, registers the card with the
// built CLI (the generated admin token), finds it and backs the database up, then stops it with SIGTERM: exit 0 or a
// message saying which step failed.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const [folder, card] = process.argv.slice(2);
const dataDir = mkdtempSync(path.join(tmpdir(), 'a2a-registry-smoke-'));
const env = { ...process.env, HOST: '127.0.0.1', PORT: '0', REGISTRY_DATA_DIR: dataDir, LOG_LEVEL: 'info' };
delete env.PUBLIC_URL;
delete env.REGISTRY_TOKENS;

/** Whether any process of the group `pgid` leads is still running (signal 0 only checks). */
const groupAlive = (pgid) => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

const fail = (message) => {
  console.error(`smoke: ${message}`);
  process.exitCode = 1;
};

const server = spawn('npm', ['start', '--silent'], { cwd: folder, env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve(code ?? signal)));
try {
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the registry did not start within 30 s')), 30_000);
    readline.createInterface({ input: server.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line);
        if (entry.msg === 'registry listening') {
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => reject(new Error(`npm start exited (${code}) before listening`)));
  });
  for (let i = 0; ; i++) {
    const ready = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
    if (ready) break;
    if (i > 100) throw new Error('/readyz never answered 200');
    await new Promise((r) => setTimeout(r, 100));
  }
  const cli = (...args) => spawnSync(process.execPath, [path.join(folder, 'bin/a2a-registry.js'), ...args, '--registry', url], { env, encoding: 'utf8' });
  const registered = cli('register', '--json', card);
  if (registered.status !== 0) throw new Error(`register exited ${registered.status}: ${registered.stderr}`);
  const { id } = JSON.parse(registered.stdout);
  const found = cli('search', '--json', 'invoice');
  if (found.status !== 0 || !JSON.parse(found.stdout).results.some((hit) => hit.id === id)) throw new Error(`search did not find ${id}: ${found.stdout}${found.stderr}`);
  // A backup of the running registry's database, as the README's Backups section takes it.
  const backupFile = path.join(dataDir, 'smoke-backup.db');
  const backedUp = spawnSync(process.execPath, [path.join(folder, 'bin/a2a-registry.js'), 'backup', '--json', backupFile], { env, encoding: 'utf8' });
  if (backedUp.status !== 0 || JSON.parse(backedUp.stdout).entries !== 1) throw new Error(`backup exited ${backedUp.status}: ${backedUp.stdout}${backedUp.stderr}`);
  // The web page: a browser asking for / gets HTML whose every script and style is served.
  const page = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
  const html = await page.text();
  const assets = [...html.matchAll(/(?:src|href)="([^"]*\/assets\/[^"]+)"/g)].map((m) => new URL(m[1], `${url}/`).href);
  if (!page.ok || !/text\/html/.test(page.headers.get('content-type') ?? '') || assets.length === 0) throw new Error(`/ did not serve the built web page: ${page.status} ${html.slice(0, 200)}`);
  for (const asset of assets) {
    const answer = await fetch(asset);
    if (!answer.ok) throw new Error(`${asset} answered ${answer.status}`);
  }
  console.log(`smoke: npm start served ${url} (the web page and its ${assets.length} assets); the built CLI registered ${id}, found it and backed the database up`);
} catch (err) {
  fail(err.message);
} finally {
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    // it has exited already (the failure says why)
  }
  const code = await exited;
  if (code !== 0 && code !== 'SIGTERM') fail(`npm start ended with ${code} after SIGTERM`);
  // npm exits at the signal while the registry it started is still shutting down and may still
  // write to its data directory (a write that finds its database file deleted re-creates it, so
  // removing the directory first left it behind, re-created, after every run): wait until no
  // process of the group is left.
  for (let waited = 0; groupAlive(server.pid); waited += 100) {
    if (waited >= 30_000) {
      fail('the registry was still running 30 s after SIGTERM');
      process.kill(-server.pid, 'SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  rmSync(dataDir, { recursive: true, force: true });
}
