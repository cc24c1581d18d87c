/**
 * Whether a module is the program node was started with. Comparing import.meta.url with
 * `file://${process.argv[1]}` missed whenever the two spell the path differently: node resolves
 * symbolic links in the module's URL but not in argv[1] (a release directory reached through a
 * `current` link), the URL percent-encodes what argv[1] does not (a space in a folder name), and
 * argv[1] may lack the extension node added (`node dist/src/main`). The registry then loaded,
 * did nothing and exited 0 without a word.
 */
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** `moduleUrl` (import.meta.url) is the file `node <script>` ran, both followed to their real paths. */
export function isMainModule(moduleUrl: string, script: string | undefined = process.argv[1]): boolean {
  if (!script) return false;
  try {
    // As node found the script: relative to the working directory, with the extension it tried.
    const started = createRequire(moduleUrl).resolve(path.resolve(script));
    return realpathSync(started) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
