/**
 * Temporary directories for tests. Every directory made here is removed when the test process
 * exits, whether its tests passed, failed or threw, so a run leaves nothing in the system's
 * temporary directory; tests that want the room back sooner call removeTempDir.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const created = new Set<string>();

function removeAll(): void {
  for (const dir of created) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort: the process is exiting
    }
  }
  created.clear();
}

export function tempDir(prefix = 'a2a-registry-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (created.size === 0) process.once('exit', removeAll);
  created.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  created.delete(dir);
}
