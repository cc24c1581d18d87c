/**
 * Child process for test/storage-crash.test.ts: opens a store and registers entries in a
 * loop until it is killed, printing one line per write *after* its promise resolved:
 *
 *   ack <id> <revision> <contentHash>
 *
 * Every acknowledged line is a promise the store made ("this is durable"); the test kills
 * this process with SIGKILL at a random moment and checks that every promise was kept.
 * Writes to a pipe are synchronous on Linux, so a printed line was really handed to the
 * parent before the next write starts.
 *
 * usage: node --import ./test/support/typescript-hooks.mjs test/support/storage-writer.ts <sqlite|postgres> <file|url> <tag> [workers]
 */
import { SqliteStore } from '../../src/storage/sqlite/index.js';
import { PostgresStore } from '../../src/storage/postgres/index.js';
import type { RegistryStore } from '../../src/storage/types.js';
import { actor, entryWrite } from './store-fixtures.js';

const [engine, target, tag = 'w', workersArg = '1'] = process.argv.slice(2);
if ((engine !== 'sqlite' && engine !== 'postgres') || !target) {
  console.error('usage: storage-writer.ts <sqlite|postgres> <file|url> <tag> [workers]');
  process.exit(2);
}

const store: RegistryStore =
  engine === 'sqlite' ? new SqliteStore({ file: target }) : new PostgresStore({ url: target, poolMax: 8 });
await store.open();
process.stdout.write('ready\n');

let counter = 0;
const writer = actor('crash-writer');

async function worker(): Promise<never> {
  for (;;) {
    const n = counter++;
    // Three of four writes create a new entry; the fourth updates an earlier one (a new
    // revision of an existing identity), so both paths are interrupted at random points.
    const index = n % 4 === 3 ? n - 3 : n;
    const kind = index % 5 === 0 ? 'mcp-server' : 'agent';
    const outcome = await store.upsert(
      entryWrite(kind, `https://crash.example.com/${tag}/${index}`, `${tag}-${n}`),
      writer,
    );
    if (outcome.status === 'forbidden' || outcome.status === 'quota-exceeded' || outcome.status === 'url-taken') throw new Error(`unexpected ${outcome.status}`);
    process.stdout.write(`ack ${outcome.entry.id} ${outcome.entry.revision} ${outcome.entry.contentHash}\n`);
  }
}

const workers = Math.max(1, Number(workersArg));
await Promise.all(Array.from({ length: workers }, () => worker()));
