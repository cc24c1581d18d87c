/**
 * Standing searches benchmark (issue 19): what one committed change costs when many watches are
 * open — the WatchHub deciding, for every watch, whether the changed entry is in its results now.
 *
 *   npx tsx bench/watch.ts [--sizes 10000,100000] [--watches 1000,10000] [--changes 500] [--seed 42]
 *        [--kinds filter,query,both]
 *
 * The index holds generated entries (./lib/generate-entries.ts); the watches are the real
 * WatchHub's, on the real RegistryService and search index, their definitions stored in a SQLite
 * file (a temp directory, removed at the end). The watches take turns among the `--kinds`: an
 * empty query and a filter (an owner or a tag), a keyword query, a keyword query and a filter;
 * watches the registry refuses (more than 10,000 matching entries) are left out and counted.
 * Each change re-publishes an existing entry (as a refresh would): every watch matches it
 * against its query; those it is in send an `updated` event. Printed per size and watch count:
 * the time to open the watches (each collects its current matches), and per change the mean,
 * p50, p99 and max time for all watches, and per watch.
 */
import { rmSync, mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Caller } from '../src/contract/caller.js';
import type { SearchFilter, WatchRequest } from '../src/contract/types.js';
import { ChangeFeed } from '../src/registry/change-feed.js';
import { PageTokens } from '../src/registry/page-token.js';
import { RegistryService } from '../src/registry/service.js';
import { createSearchIndex } from '../src/search/index.js';
import { SqliteStore } from '../src/storage/index.js';
import { DEFAULT_WATCH_LIMITS, WatchHub } from '../src/subscriptions/watch-hub.js';
import { createDocumentValidator } from '../src/validation/index.js';
import { createSignatureVerifier, NO_TRUSTED_KEYS } from '../src/validation/signature.js';
import { positiveNumbers } from './lib/args.js';
import { generateEntries, indexedGenerated, prng, vocabularyWords } from './lib/generate-entries.js';

interface Args {
  sizes: number[];
  watches: number[];
  changes: number;
  seed: number;
  /** Which watches: `filter` (empty query), `query`, `both` (query and filter); default all three in turn. */
  kinds: Kind[];
}

type Kind = 'filter' | 'query' | 'both';

function readArgs(): Args {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '10000,100000' },
      /** Open watches, each count in turn per size. */
      watches: { type: 'string', default: '1000,10000' },
      changes: { type: 'string', default: '500' },
      seed: { type: 'string', default: '42' },
      kinds: { type: 'string', default: 'filter,query,both' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log('npx tsx bench/watch.ts [--sizes 10000,100000] [--watches 1000,10000] [--changes 500] [--seed 42] [--kinds filter,query,both]');
    process.exit(0);
  }
  return {
    sizes: positiveNumbers(values.sizes),
    watches: positiveNumbers(values.watches),
    changes: Number(values.changes),
    seed: Number(values.seed),
    kinds: values.kinds.split(',') as Kind[],
  };
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const ms = (n: number): string => (n < 1 ? n.toFixed(3) : n < 100 ? n.toFixed(2) : n.toFixed(0));

/** The watch requests: empty query + filter, keyword query, keyword query + filter, in turn. */
function watchRequests(count: number, seed: number, tags: string[], kinds: Kind[]): WatchRequest[] {
  const random = prng(seed);
  const one = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!;
  const words = vocabularyWords();
  const filter = (): SearchFilter => (random() < 0.5 ? { owner: `owner-${Math.floor(random() * 500)}` } : { tags: [one(tags)] });
  const query = (): string => Array.from({ length: 1 + Math.floor(random() * 2) }, () => one(words)).join(' ');
  return Array.from({ length: count }, (_, i) => {
    const kind = kinds[i % kinds.length]!;
    if (kind === 'filter') return { filter: filter(), initial: false };
    if (kind === 'query') return { query: query(), initial: false };
    return { query: query(), filter: filter(), initial: false };
  });
}

async function run(size: number, watchCounts: number[], args: Args): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-watch-'));
  const store = new SqliteStore({ file: join(dir, 'registry.db') });
  await store.open();
  try {
    const generated = generateEntries(size, args.seed);
    const index = createSearchIndex();
    const tagCounts = new Map<string, number>();
    for (const g of generated) {
      const entry = indexedGenerated(g);
      index.upsert(entry);
      for (const skill of entry.description.skills) for (const tag of skill.tags) tagCounts.set(tag, (tagCounts.get(tag) ?? 0) + 1);
    }
    const tags = [...tagCounts.keys()];
    const service = new RegistryService({
      store,
      index,
      validator: createDocumentValidator({ maxDocumentBytes: 1 << 20 }),
      verifier: createSignatureVerifier(NO_TRUSTED_KEYS),
      pageTokens: new PageTokens('bench-watch-secret-0123456789abcdef'),
      feed: new ChangeFeed(),
      publicRead: true,
    });
    for (const watchCount of watchCounts) {
      // The hub follows a feed of its own: the index stays as built, each change re-announces an entry.
      const feed = new ChangeFeed();
      const hub = new WatchHub(feed, service, store, { ...DEFAULT_WATCH_LIMITS, maxPerPrincipal: Number.MAX_SAFE_INTEGER });
      const requests = watchRequests(watchCount, args.seed + watchCount, tags, args.kinds);
      let refused = 0;
      const openStarted = performance.now();
      for (let i = 0; i < requests.length; i++) {
        const caller: Caller = { isAdmin: true, principal: `bench-${i % 50}` };
        try {
          await hub.start(`watch-${size}-${watchCount}-${i}`, requests[i]!, caller, { contextId: '', scope: { tenant: '', owner: caller.principal! } });
        } catch {
          refused++;
        }
      }
      const openMs = performance.now() - openStarted;
      const random = prng(args.seed + 1);
      let events = 0;
      for (const w of requests.keys()) hub.get(`watch-${size}-${watchCount}-${w}`)?.listen(() => events++);
      const times: number[] = [];
      for (let c = 0; c < args.changes; c++) {
        const id = generated[Math.floor(random() * generated.length)]!.id;
        const t0 = performance.now();
        feed.publish({ id, op: 'upsert', origin: 'local' });
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      const mean = times.reduce((a, b) => a + b, 0) / times.length;
      const open = watchCount - refused;
      console.log(
        `${String(size).padStart(7)} entries  ${String(open).padStart(6)} watches (${refused} refused as too broad)  ` +
          `open ${ms(openMs)} ms (${ms(openMs / Math.max(1, watchCount))} ms each)  ` +
          `per change: mean ${ms(mean)} ms  p50 ${ms(percentile(times, 50))}  p99 ${ms(percentile(times, 99))}  max ${ms(times.at(-1) ?? 0)}  ` +
          `(${ms((mean * 1000) / Math.max(1, open))} µs per watch; ${(events / args.changes).toFixed(1)} events per change)`,
      );
      await hub.close();
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const args = readArgs();
console.log(`bench/watch.ts  sizes ${args.sizes.join(',')}  watches ${args.watches.join(',')} (${args.kinds.join(', ')})  changes ${args.changes}  load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
for (const size of args.sizes) await run(size, args.watches, args);
console.log(`load at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
