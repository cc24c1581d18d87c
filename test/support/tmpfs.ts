/** Real full disks for tests: a small tmpfs mounted for the test (root only), and a way to fill it. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Mounts a tmpfs of `megabytes` (root only); the reason instead when that is not possible here. */
export function mountTmpfs(megabytes: number, prefix = 'registry-full-disk-'): { dir: string; unmount(): void } | string {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    fs.rmdirSync(dir);
    return `cannot mount a tmpfs here: ${(error as Error).message.split('\n')[0]}`;
  }
  return {
    dir,
    unmount() {
      execFileSync('umount', [dir]);
      fs.rmdirSync(dir);
    },
  };
}

/** Writes a file until the file system is full; returns the files written (remove them to make room again). */
export function fill(dir: string): string[] {
  const file = path.join(dir, 'filler');
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    fs.closeSync(fd);
  }
  // And the last few blocks a smaller write could still use.
  const small = path.join(dir, 'filler-small');
  const smallFd = fs.openSync(small, 'w');
  try {
    for (;;) fs.writeSync(smallFd, Buffer.alloc(512, 1));
  } catch {
    /* full */
  } finally {
    fs.closeSync(smallFd);
  }
  return [file, small];
}
