/**
 * `a2a-registry watch [words...] [filters]`: a standing search. Prints the current matches, then
 * one line per change as the registry streams it — an entry that enters (+), changes within (~)
 * or leaves (-) the results — until interrupted (Ctrl-C) or the registry ends the watch.
 * `--json` prints JSON lines: `{"event": "initial", "results", "total"}` first, then each event
 * as the registry sends it, and `{"event": "ended", "state", "message"}` last when the registry
 * ends the watch. The watch is renewed before it expires (./watch-renewal.ts), so it runs for as
 * long as the command does.
 *
 * Needs a token (--token, A2A_REGISTRY_TOKEN, or the local admin token).
 * Ctrl-C cancels the watch on the registry before exiting (status 130), and so do SIGTERM (143),
 * SIGHUP (129) and a reader that went away (a closed pipe, 0). When the stream is cut (the
 * registry restarted) the command subscribes to the watch again (SubscribeToTask) for up to a
 * minute, saying the last event it printed (Last-Event-ID), and prints what it missed (or a
 * resync, with its matches listed as the initial ones are); an event it printed already (each has its seq) is not printed again.
 * The watch's task id is said when it starts (on stderr; --json: `taskId` in the initial line,
 * or a first line `{"event": "started", "taskId"}` with --no-initial), and again when the command
 * gives up resuming it: the watch then stays open on the registry, counted against the
 * principal's REGISTRY_MAX_WATCHES until it expires, and `watch --cancel <taskId>` ends it.
 * `watch --list` lists the principal's open watches (ListTasks: its own tasks still working).
 *
 * Exit code: 1 declined (no token, too many watches) or the watch ended (canceled, expired,
 * failed: said on stderr), 2 usage, 3 unreachable or the registry closed the stream.
 */
import os from 'node:os';
import { InvalidArgumentError, type Command } from 'commander';
import type { WatchRequest } from '../../contract/types.js';
import type { StreamObserver, TaskEnd } from '../client.js';
import { dataPart, isObject, RegistryDeclined, RegistryProtocolError, RegistryUnreachable, sendsToken } from '../connection.js';
import { EXIT_FAILED, EXIT_OK, countOf, defaultOutput, onClosedPipe, printJson, reportFailure, reportUsage, styles, type TypedArguments } from '../output.js';
import { nonEmpty } from '../option-values.js';
import { runRemote } from '../remote.js';
import { WatchRenewal } from '../watch-renewal.js';
import { filterOptions, queryArguments, searchRequest } from './search.js';

/** How long the command keeps trying to resume a watch whose stream was cut (a registry restart), unless --resume-for says. */
const RESUME_FOR_SECONDS = 60;
const MAX_RESUME_FOR_SECONDS = 3600;
const RESUME_EVERY_MS = 1000;
/** The signals that end a watch: each cancels it on the registry first. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

interface WatchOptions {
  initial: boolean;
  json: boolean;
  resumeFor: number;
  cancel?: string;
  list?: boolean;
}

function resumeSeconds(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(value.trim()) || n > MAX_RESUME_FOR_SECONDS) {
    throw new InvalidArgumentError(`must be a number of seconds from 0 to ${MAX_RESUME_FOR_SECONDS}`);
  }
  return n;
}

/** The command line that cancels the watch `taskId` on the registry at `registryUrl` (the token given as for this command). */
const cancelCommand = (registryUrl: string, taskId: string): string => `a2a-registry --registry ${registryUrl} watch --cancel ${taskId}`;

/** `watch --cancel <taskId>`: ends a watch (CancelTask), one left open by a command that gave up, or started elsewhere. */
async function cancelWatch(command: Command, taskId: string): Promise<number> {
  return runRemote(command, async ({ client, out, json }) => {
    await client.cancel(taskId);
    if (json) printJson(out, { taskId, state: 'CANCELED' });
    else out.out(`${styles(out.color).green('✓ canceled')} watch ${taskId}\n`);
    return EXIT_OK;
  }, { jsonLines: true });
}

/** `watch --list`: the principal's open watches, with until when each runs and what it watches. */
async function listWatches(command: Command): Promise<number> {
  return runRemote(command, async ({ client, out, json }) => {
    const watches = await client.openWatches();
    // Watches are listed for the token that started them, and a watch needs one: without a token
    // "no open watch" was all it said, whatever watches the user's token had open.
    if (watches.length === 0 && !sendsToken(client.connection)) {
      out.err('No token was sent: watches are listed for the token that started them; give it with --token or A2A_REGISTRY_TOKEN.\n');
    }
    if (json) {
      printJson(out, { watches });
      return EXIT_OK;
    }
    const s = styles(out.color);
    if (watches.length === 0) out.out(s.dim('no open watch') + '\n');
    for (const w of watches) out.out(`${w.taskId}  ${s.dim(`until ${w.expiresAt}`)}  ${w.request ? JSON.stringify(w.request) : ''}`.trimEnd() + '\n');
    if (watches.length > 0) out.out(s.dim(`${countOf(watches.length, 'open watch', 'open watches')}; end one with: a2a-registry watch --cancel <taskId>`) + '\n');
    return EXIT_OK;
  }, { jsonLines: true });
}

/** "1 match now", "3 matches now" (the total as the registry sent it, which a stream does not type). */
const matchesNow = (total: unknown): string => (typeof total === 'number' ? `${countOf(total, 'match', 'matches')} now` : `${String(total)} matches now`);

/** A current match as the initial listing and a resync print it: indented, name, kind, id. */
const matchLine = (hit: Record<string, unknown>): string => `  ${String(hit.name)}  ${String(hit.kind)}  ${String(hit.id)}\n`;

/** The hits of a `watch-results` chunk or a `resync` event. */
const resultsOf = (data: Record<string, unknown>): Record<string, unknown>[] => (Array.isArray(data.results) ? data.results.filter(isObject) : []);

/**
 * One line per event, for people; a resync's line is followed by its matches, as the initial
 * listing is: it replaces the picture the terminal shows (the changes it stands for were not
 * told one by one).
 */
function line(data: Record<string, unknown>): string {
  if (data.event === 'resync') return `= resync: ${matchesNow(data.total)}\n${resultsOf(data).map(matchLine).join('')}`;
  const hit = isObject(data.hit) ? data.hit : {};
  const who = `${String(hit.name ?? hit.id ?? '?')}  ${String(hit.kind ?? '')}  ${String(hit.id ?? '')}`.replace(/\s+$/, '');
  switch (data.event) {
    case 'added':
      return `+ ${who}\n`;
    case 'updated':
      return `~ ${who}\n`;
    case 'removed':
      return `- ${who}\n`;
    default:
      return `? ${JSON.stringify(data)}\n`;
  }
}

/** Where the watch's arguments come from on its command line. */
const watchArguments = (o: Parameters<typeof queryArguments>[0]): TypedArguments => ({ operation: 'watch', from: { ...queryArguments(o), '/initial': '--no-initial' } });

export function register(program: Command): void {
  filterOptions(
    program
      .command('watch')
      .description('keep a search open: print the current matches, then each entry that enters (+), changes (~) or leaves (-) the results')
      .argument('[words...]', 'keywords, as for search'),
  )
    .option('--no-initial', 'skip the current matches; print changes only')
    .option('--json', 'print JSON lines: {"event": "initial", "taskId", ...} first, then each event', false)
    .option('--resume-for <seconds>', `how long to keep resuming a watch whose stream was cut (a registry restart) before giving up, 0 to ${MAX_RESUME_FOR_SECONDS}`, resumeSeconds, RESUME_FOR_SECONDS)
    .option('--cancel <taskId>', 'cancel an open watch by its task id (said when a watch starts, and when the command gives up on it), then exit', nonEmpty)
    .option('--list', 'list your open watches (task id, until when it runs, what it watches), then exit')
    .addHelpText(
      'after',
      // Every other command's help says its exit status; a script running a watch needs it most (which ends are failures).
      '\nNeeds a token (--token or A2A_REGISTRY_TOKEN; on the registry\'s machine its generated admin token is used).\n' +
        'Exit status: 0 --list or --cancel done, or the reader of its output went away; 1 declined (no token, too many watches) or the registry\n' +
        'ended the watch (canceled elsewhere, expired, failed: said on stderr); 2 usage; 3 registry unreachable, or the stream was cut and\n' +
        'resuming it failed (the task left open is said, with the command that cancels it); 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (the watch\n' +
        'canceled on the registry first).\n' +
        'Examples:\n  a2a-registry watch translate --input-mode application/pdf\n  a2a-registry watch --tag finance --json\n  a2a-registry watch --list\n  a2a-registry watch --cancel <taskId>')
    .action(async (words: string[], options: WatchOptions & Parameters<typeof searchRequest>[1], command: Command) => {
      const { query, filter } = searchRequest(words, options);
      if (options.cancel !== undefined || options.list) {
        // Either one, alone: words or filters would say a watch to start, which neither does.
        if (query || filter || !options.initial || (options.cancel !== undefined && options.list)) {
          const json = command.optsWithGlobals<{ json?: boolean }>().json === true;
          process.exitCode = reportUsage({ ...defaultOutput(), jsonLines: true }, json, 'USAGE', '--cancel and --list take no words, filters or --no-initial, nor each other');
          return;
        }
        process.exitCode = options.list ? await listWatches(command) : await cancelWatch(command, options.cancel!);
        return;
      }
      const request: WatchRequest = { ...(query ? { query } : {}), ...(filter ? { filter } : {}), ...(options.initial ? {} : { initial: false }) };
      process.exitCode = await runRemote(command, async ({ client, out, json }) => {
        const s = styles(out.color);
        // Ctrl-C, and what `timeout`, `kill`, service managers (SIGTERM) and a closed terminal
        // (SIGHUP) send, cancel the watch on the registry (left open, it would count against the
        // principal's REGISTRY_MAX_WATCHES for REGISTRY_WATCH_TTL_SECONDS, a day by default),
        // then exit 128 + the signal's number, as the shell reports a process the signal ended;
        // so does a reader that went away (`| grep -m1 added`), with status 0 as for every
        // command. A second signal while the cancel is pending exits at once.
        let taskId: string | undefined;
        // Renewed well before it expires, the watch runs until the command is stopped.
        const renewal = new WatchRenewal(
          () => client.renew(taskId!),
          (err, retryIn) => {
            const next = retryIn === undefined ? 'its time is up' : `retrying in ${Math.ceil(retryIn / 1000)} s`;
            out.err(s.dim(`renewing the watch failed (${(err as Error).message}); ${next}`) + '\n');
          },
        );
        let stopping = false;
        const end = (code: number): void => {
          if (stopping) process.exit(code);
          stopping = true;
          renewal.stop();
          const done = () => process.exit(code);
          if (taskId) client.cancel(taskId).then(done, done);
          else done();
        };
        for (const signal of STOP_SIGNALS) process.on(signal, () => end(128 + os.constants.signals[signal]));
        // A reader that went away is noticed at the next line written (EPIPE): Node watches a pipe
        // it writes to only while a write is pending, emits neither 'close' nor 'error' before,
        // and a zero-length write succeeds on a pipe with no reader (Linux returns before
        // checking). `| grep -m1 added` therefore ends with the watch's next event, not at once.
        onClosedPipe(() => end(EXIT_OK));
        let completedWith: string | undefined;
        let expiresAtText: string | undefined;
        let announced = false;
        const observer: StreamObserver = {
          task: (id, metadata) => {
            // Said once, when the watch starts (a resume tells the same task again; a refused
            // watch's task has no expiry, nothing to cancel): the id is what cancels the watch
            // from elsewhere, or after this command gave up on it.
            if (!announced && typeof metadata?.watchExpiresAt === 'string') {
              announced = true;
              if (!json) out.err(s.dim(`watch ${id} started; to cancel it from elsewhere: ${cancelCommand(client.connection.url, id)}`) + '\n');
              else if (!options.initial) out.out(JSON.stringify({ event: 'started', taskId: id }) + '\n');
            }
            taskId = id;
            if (typeof metadata?.watchExpiresAt === 'string') expiresAtText = metadata.watchExpiresAt;
            const expiresAt = Date.parse(String(metadata?.watchExpiresAt));
            if (!Number.isNaN(expiresAt)) renewal.expiresAt(expiresAt);
          },
          completed: (message) => (completedWith = message),
        };
        // The watch ended on the registry (expired, canceled elsewhere, failed): say why, exit 1.
        const ended = (how: TaskEnd): number => {
          const message = how.message ?? `the registry ended the watch's task ${how.state}`;
          if (json) out.out(JSON.stringify({ event: 'ended', state: how.state, message }) + '\n');
          out.err(`a2a-registry: the registry ended the watch (${how.state.toLowerCase()}): ${message}\n`);
          return EXIT_FAILED;
        };
        // Given up resuming: the watch is still open on the registry (counted against the
        // principal's REGISTRY_MAX_WATCHES until it expires, a day by default), so say which it
        // is and how to cancel it once the registry is back.
        const gaveUp = (err: RegistryDeclined | RegistryUnreachable | RegistryProtocolError, id: string): number => {
          const cancel = cancelCommand(client.connection.url, id);
          const code = reportFailure(err, out, json, undefined, { taskId: id, ...(expiresAtText ? { expiresAt: expiresAtText } : {}), cancel });
          const until = expiresAtText ? ` until ${expiresAtText}` : '';
          out.err(
            `a2a-registry: gave up resuming the watch after ${options.resumeFor} s; its task ${id} stays open on the registry${until}, counted against your REGISTRY_MAX_WATCHES. ` +
              `Cancel it once the registry is back (with the same token): ${cancel}\n`,
          );
          return code;
        };
        // The registry restarting (or the connection dropping) cuts the stream, not the watch:
        // subscribe to it again, for up to RESUME_FOR_MS, and go on from the events missed.
        let chunks = client.stream([dataPart({ watch: request })], observer);
        let lostSince: number | undefined;
        // The last event printed: said when resuming, and an event numbered up to it is not printed twice.
        let lastSeq = 0;
        try {
          for (;;) {
            try {
              for await (const chunk of chunks) {
                lostSince = undefined;
                if (chunk.artifact === 'watch-results') {
                  if (json) out.out(JSON.stringify({ event: 'initial', ...(taskId ? { taskId } : {}), ...chunk.data }) + '\n');
                  else {
                    out.out(s.dim(`${matchesNow(chunk.data.total)}; watching for changes (Ctrl-C to stop).`) + '\n');
                    for (const hit of resultsOf(chunk.data)) out.out(matchLine(hit));
                  }
                } else if (chunk.artifact === 'watch-event') {
                  const seq = chunk.data.seq;
                  if (typeof seq === 'number') {
                    if (seq <= lastSeq) continue;
                    lastSeq = seq;
                  }
                  out.out(json ? JSON.stringify(chunk.data) + '\n' : line(chunk.data));
                }
              }
              // The stream ended with the task COMPLETED: a watch completes only when it expires.
              return ended({ state: 'COMPLETED', message: completedWith });
            } catch (err) {
              // Our own cancel ends the stream CANCELED: not an error; exit once the cancel is answered.
              if (stopping) await new Promise(() => undefined);
              // Canceled elsewhere, or failed (its webhook, grown too broad): the watch is over.
              // (A watch refused at the start is REJECTED: reported as any declined request.)
              if (taskId !== undefined && err instanceof RegistryDeclined && (err.state === 'CANCELED' || err.state === 'FAILED')) {
                return ended({ state: err.state, message: err.error.message });
              }
              lostSince ??= Date.now();
              // A refusal is final, except a rate limit's (429 at the door, RATE_LIMITED): that one passes.
              const final = err instanceof RegistryDeclined && err.error.retryAfterSeconds === undefined;
              if (!announced && err instanceof RegistryDeclined && err.error.code === 'QUOTA_EXCEEDED') {
                // The registry says to cancel one (CancelTask): how, from here.
                const code = reportFailure(err, out, json);
                out.err(`List your open watches with: a2a-registry --registry ${client.connection.url} watch --list; end one with: watch --cancel <taskId>\n`);
                return code;
              }
              if (final || taskId === undefined) throw err;
              // Resuming a watch that ended while the stream was cut (it expired while the registry
              // was down) is refused, the task being finished: its status says how it ended.
              if (err instanceof RegistryProtocolError) {
                const how = await client.ended(taskId).catch(() => undefined);
                if (how) return ended(how);
              }
              if (Date.now() - lostSince >= options.resumeFor * 1000) {
                if (err instanceof RegistryDeclined || err instanceof RegistryUnreachable || err instanceof RegistryProtocolError) return gaveUp(err, taskId);
                throw err;
              }
              out.err(s.dim(`the stream was cut (${(err as Error).message}); resuming the watch...`) + '\n');
              await new Promise((resolve) => setTimeout(resolve, RESUME_EVERY_MS));
              chunks = client.resume(taskId, observer, lastSeq);
            }
          }
        } finally {
          renewal.stop(); // the watch refused, unreachable for good, or ended: nothing left to renew
        }
      }, { openStreams: true, jsonLines: true, arguments: watchArguments(options) });
    });
}
