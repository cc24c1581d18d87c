/** The package version for `--version`, read from package.json (two levels up from src/, three from dist/src/). */
import { readFileSync } from 'node:fs';

export function readPackageVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg: unknown = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8'));
      if (typeof pkg === 'object' && pkg !== null && 'name' in pkg && pkg.name === 'a2a-agent-registry' && 'version' in pkg && typeof pkg.version === 'string') {
        return pkg.version;
      }
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}
