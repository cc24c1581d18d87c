/**
 * Shutdown does not wait for a scan of every stored signed card (about a minute at 1,000,000
 * entries, longer than a container's grace period, so the process was killed before it saved its
 * search index): the background task's signal ends the scan at its next turn, and what the scan
 * did not reach is checked by the next one. On a real SQLite file with the real signature verifier.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CardVerification } from '../src/contract/verification.js';
import { CoalescedTask } from '../src/lib/coalesced-task.js';
import { CardTrust } from '../src/registry/card-trust.js';
import { ChangeFeed } from '../src/registry/change-feed.js';
import { SqliteStore } from '../src/storage/sqlite/index.js';
import { createSignatureVerifier, NO_TRUSTED_KEYS } from '../src/validation/signature.js';
import { actor, entryWrite } from './support/store-fixtures.js';
import { removeTempDir, tempDir } from './support/temp.js';

describe('CoalescedTask.stop', () => {
  it('aborts the running task\'s signal, waits for it to return, and runs nothing after', async () => {
    let runs = 0;
    let seen: AbortSignal | undefined;
    const task = new CoalescedTask(
      (signal) => {
        runs++;
        seen = signal;
        // A task that would never end on its own: only the signal ends it.
        return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
      (err) => assert.fail(err as Error),
    );
    task.wake();
    task.wake(); // coalesced into one more run after the current one, which stop() cancels
    assert.equal(runs, 1);
    await task.stop();
    assert.equal(seen?.aborted, true);
    task.wake();
    await task.idle();
    assert.equal(runs, 1, 'neither the coalesced wake nor a wake after stop() ran the task again');
  });
});

describe('re-evaluating stored signatures, stopped partway', () => {
  it('keeps what it checked, leaves the rest for the next scan, and the next scan checks exactly the rest', async () => {
    const dir = tempDir('a2a-signature-scan-');
    const store = new SqliteStore({ file: join(dir, 'registry.db') });
    await store.open();
    try {
      // Signed cards checked against trust roots no longer in force ('old'): every one is re-evaluated.
      const stale: CardVerification = { verified: true, kid: 'key-1', alg: 'ES256', signatures: [{ status: 'verified', kid: 'key-1', alg: 'ES256' }], keyset: 'old' };
      const total = 300;
      await Promise.all(
        Array.from({ length: total }, (_, i) => {
          const write = entryWrite('agent', `https://agent-${i}.example.com/a2a`);
          write.verification = stale;
          return store.upsert(write, actor('alice'));
        }),
      );
      const feed = new ChangeFeed();
      const verifier = createSignatureVerifier(NO_TRUSTED_KEYS);
      const trust = new CardTrust({ store, feed, verifier, requireVerified: false });

      // Shutdown arrives once the scan has changed its first entry.
      const shutdown = new AbortController();
      const unsubscribe = feed.subscribe(() => shutdown.abort());
      const first = await trust.reevaluateAll(shutdown.signal);
      unsubscribe();
      assert.equal(first.stopped, true);
      assert.ok(first.checked > 0 && first.checked < total, `the scan stopped partway (${first.checked} of ${total} checked)`);
      assert.equal(first.changed, first.checked, 'each checked card is no longer verified (no trusted keys now)');

      let current = 0;
      for await (const entry of store.scan()) if (entry.verification?.keyset === verifier.keyset) current++;
      assert.equal(current, first.checked, 'what the stopped scan checked is stored; nothing else was touched');

      const second = await trust.reevaluateAll();
      assert.equal(second.stopped, false);
      assert.equal(first.checked + second.checked, total, 'the next scan checks exactly what the stopped one did not');
      for await (const entry of store.scan()) {
        assert.equal(entry.verification?.keyset, verifier.keyset);
        assert.equal(entry.verification?.verified, false);
      }
    } finally {
      await store.close();
      removeTempDir(dir);
    }
  });
});
