/**
 * `a2a-registry watch [words...] [filters]`: a standing search. Prints the current matches, then
 * one line per change as the registry streams it — an entry that enters (+), changes within (~)
 * or leaves (-) the results — until interrupted (Ctrl-C) or the registry ends the watch.
 * `--json` prints JSON lines: `{"event": "initial", "results", "total"}` first, then each event
 * as the registry sends it.
 *
 * Needs a token (--token, A2A_REGISTRY_TOKEN, or the local admin token).
 * Ctrl-C cancels the watch on the registry before exiting (status 130).
 * Exit code: 1 declined (no token, too many watches) or the watch ended (canceled, expired,
 * failed), 2 usage, 3 unreachable or the registry closed the stream.
 */
import type { Command } from 'commander';
import type { WatchRequest } from '../../contract/types.js';
import { dataPart, isObject } from '../client.js';
import { EXIT_OK, styles } from '../output.js';
import { runRemote } from '../remote.js';
import { filterOptions, searchRequest } from './search.js';

interface WatchOptions {
  initial: boolean;
  json: boolean;
}

/** One line per hit or event, for people. */
function line(data: Record<string, unknown>): string {
  const hit = isObject(data.hit) ? data.hit : {};
  const who = `${String(hit.name ?? hit.id ?? '?')}  ${String(hit.kind ?? '')}  ${String(hit.id ?? '')}`.replace(/\s+$/, '');
  switch (data.event) {
    case 'added':
      return `+ ${who}`;
    case 'updated':
      return `~ ${who}`;
    case 'removed':
      return `- ${who}`;
    case 'resync':
      return `= resync: ${String(data.total)} match(es) now`;
    default:
      return `? ${JSON.stringify(data)}`;
  }
}

export function register(program: Command): void {
  filterOptions(
    program
      .command('watch')
      .description('keep a search open: print the current matches, then each entry that enters (+), changes (~) or leaves (-) the results')
      .argument('[words...]', 'keywords, as for search'),
  )
    .option('--no-initial', 'skip the current matches; print changes only')
    .option('--json', 'print JSON lines: {"event": "initial", ...} first, then each event', false)
    .addHelpText('after', '\nExamples:\n  a2a-registry watch translate --input-mode application/pdf\n  a2a-registry watch --tag finance --json')
    .action(async (words: string[], options: WatchOptions & Parameters<typeof searchRequest>[1], command: Command) => {
      const { query, filter } = searchRequest(words, options);
      const request: WatchRequest = { ...(query ? { query } : {}), ...(filter ? { filter } : {}), ...(options.initial ? {} : { initial: false }) };
      process.exitCode = await runRemote(command, async ({ client, out, json }) => {
        const s = styles(out.color);
        // Ctrl-C cancels the watch on the registry (it would otherwise count against the
        // principal's REGISTRY_MAX_WATCHES until it expires), then exits.
        let taskId: string | undefined;
        let stopping = false;
        process.once('SIGINT', () => {
          stopping = true;
          const done = () => process.exit(130);
          if (taskId) client.cancel(taskId).then(done, done);
          else done();
        });
        try {
          for await (const chunk of client.stream([dataPart({ watch: request })], (id) => (taskId = id))) {
            if (chunk.artifact === 'watch-results') {
              const results = Array.isArray(chunk.data.results) ? chunk.data.results.filter(isObject) : [];
              if (json) out.out(JSON.stringify({ event: 'initial', ...chunk.data }) + '\n');
              else {
                out.out(s.dim(`${String(chunk.data.total)} match(es) now; watching for changes (Ctrl-C to stop).`) + '\n');
                for (const hit of results) out.out(`  ${String(hit.name)}  ${String(hit.kind)}  ${String(hit.id)}\n`);
              }
            } else if (chunk.artifact === 'watch-event') {
              out.out(json ? JSON.stringify(chunk.data) + '\n' : line(chunk.data) + '\n');
            }
          }
        } catch (err) {
          // Our own cancel ends the stream CANCELED: not an error; exit once the cancel is answered.
          if (stopping) await new Promise(() => undefined);
          throw err;
        }
        return EXIT_OK;
      });
    });
}
