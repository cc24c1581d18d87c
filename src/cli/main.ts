/**
 * The `a2a-registry` command line. Each command lives in ./commands/<name>.ts and exports a
 * `register(program)` function; add new commands to COMMANDS below.
 *
 * Exit codes (all commands): 0 success; 1 refused or failed: the registry declined the request,
 * or a file read is the wrong one (a document invalid or not JSON, reported with line and column;
 * a backup that is not a registry's database), or something is in the way (a running registry);
 * 2 usage: unknown option, missing argument, a value out of range, a file that cannot be read
 * (not there, a folder, permission), a file in the way without --force, an unusable --registry;
 * 3 the registry could not be reached (connection refused, DNS, timeout, the connection closed mid-answer, no registry at the URL).
 *
 * The commands that talk to a registry are A2A clients of it (src/cli/client.ts) and share the
 * global options --registry, --token and --timeout.
 *
 * Run from source with `node --import tsx src/cli/main.ts ...`; the published entry point is
 * bin/a2a-registry.js, which imports the built dist/src/cli/main.js and calls main().
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_REGISTRY_URL, DEFAULT_TIMEOUT_SECONDS } from './connection.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, closedPipe, defaultOutput, printJson } from './output.js';
import { forTerminal } from './terminal-text.js';
import { isMainModule } from '../lib/entry-point.js';
import { readPackageVersion } from '../lib/package-info.js';

export type CommandRegistrar = (program: Command) => void;

/**
 * Every command of the CLI, in the order `--help` lists them, with its aliases. Each is loaded
 * only when it is needed: a command's module brings in what it runs (the server for `serve`,
 * schemas for `validate`, keys for `sign`), and loading all of them cost every invocation about
 * 0.6 s more than the one asked for.
 */
const COMMANDS: ReadonlyArray<{ names: readonly string[]; load: () => Promise<{ register: CommandRegistrar }> }> = [
  { names: ['serve'], load: () => import('./commands/serve.js') },
  { names: ['validate'], load: () => import('./commands/validate.js') },
  { names: ['register'], load: () => import('./commands/register.js') },
  { names: ['search'], load: () => import('./commands/search.js') },
  { names: ['watch'], load: () => import('./commands/watch.js') },
  { names: ['get'], load: () => import('./commands/get.js') },
  { names: ['ls', 'list'], load: () => import('./commands/ls.js') },
  { names: ['rm', 'unregister'], load: () => import('./commands/rm.js') },
  { names: ['refresh'], load: () => import('./commands/refresh.js') },
  { names: ['import'], load: () => import('./commands/import.js') },
  { names: ['backup'], load: () => import('./commands/backup.js') },
  { names: ['restore'], load: () => import('./commands/restore.js') },
  { names: ['check'], load: () => import('./commands/check.js') },
  { names: ['migrate'], load: () => import('./commands/migrate.js') },
  { names: ['keygen'], load: () => import('./commands/keygen.js') },
  { names: ['sign'], load: () => import('./commands/sign.js') },
  { names: ['verify'], load: () => import('./commands/verify.js') },
];

/**
 * The commands that talk to a registry: their own --help lists the global options too (`search
 * --help` said nothing of --registry, --token or --timeout, so not how to point it at a registry).
 */
const REMOTE_COMMANDS: ReadonlySet<string> = new Set(['register', 'search', 'watch', 'get', 'ls', 'rm', 'refresh']);

/** The commands whose --json output is JSON lines: a usage error's {"error"} document is one line there. */
const JSON_LINES_COMMANDS: ReadonlySet<string> = new Set(['watch']);

/** The global options that take a value (`--registry <url>`): the word after them is not the command. */
const GLOBAL_OPTIONS_WITH_VALUE = new Set(['--registry', '--token', '--timeout']);

/**
 * The command an argument list names (`a2a-registry --token t get x` and `help get` name `get`),
 * or undefined when it names none we know (`--help`, `help` alone, a misspelling): then every
 * command is loaded, so the help lists them all and commander can suggest the nearest.
 */
function namedCommand(args: readonly string[]): (typeof COMMANDS)[number] | undefined {
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return undefined;
    if (GLOBAL_OPTIONS_WITH_VALUE.has(arg)) {
      i++;
      continue;
    }
    if (arg.startsWith('-')) continue;
    // `help <command>` prints that command's help: its module alone (all of them cost 0.6 s more).
    if (arg === 'help' && !help) {
      help = true;
      continue;
    }
    return COMMANDS.find((c) => c.names.includes(arg));
  }
  return undefined;
}

export { EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE } from './output.js';

const MIN_TIMEOUT_SECONDS = 0.1;
const MAX_TIMEOUT_SECONDS = 3600;

function seconds(value: string): number {
  const n = Number(value);
  // The range the message states is the range checked: 0.05 passed `n <= 0` though it is below 0.1.
  if (!/^[0-9]+(\.[0-9]+)?$/.test(value.trim()) || n < MIN_TIMEOUT_SECONDS || n > MAX_TIMEOUT_SECONDS) {
    throw new InvalidArgumentError(`must be a number of seconds from ${MIN_TIMEOUT_SECONDS} to ${MAX_TIMEOUT_SECONDS}`);
  }
  return n;
}

/**
 * The program with the commands `args` (process.argv without node and the script) can run: the
 * one it names, or all of them (no arguments: all).
 */
export async function buildProgram(args: readonly string[] = []): Promise<Command> {
  const program = new Command('a2a-registry')
    .description('A2A Agent Registry: validate, register and discover A2A agents and MCP servers.')
    .version(readPackageVersion(), '-V, --version', 'print the version')
    .addOption(new Option('--registry <url>', 'the registry: its base URL, an endpoint URL (…/a2a/jsonrpc) or its card URL').env('A2A_REGISTRY_URL').default(DEFAULT_REGISTRY_URL))
    .addOption(
      new Option('--token <token>', "bearer token (default, when --registry is on this machine: the registry's generated ${REGISTRY_DATA_DIR:-./data}/admin-token, if readable)").env(
        'A2A_REGISTRY_TOKEN',
      ),
    )
    .addOption(new Option('--timeout <seconds>', 'give up when the registry\'s answer is not complete within this (a watch\'s stream: when it has not started)').argParser(seconds).default(DEFAULT_TIMEOUT_SECONDS))
    .showHelpAfterError('(run with --help for usage)')
    // Commander's messages quote what was typed ("unknown option '...'", "argument '...' is
    // invalid"), which may come from a file or the registry ($(...)): safe for the terminal too.
    .configureOutput({ writeOut: (s) => process.stdout.write(forTerminal(s)), writeErr: (s) => process.stderr.write(forTerminal(s)) })
    // Throw instead of calling process.exit, so main() owns the exit code (2 for usage errors).
    .exitOverride();
  const named = namedCommand(args);
  const modules = await Promise.all((named ? [named] : COMMANDS).map((c) => c.load()));
  for (const { register } of modules) register(program);
  for (const command of program.commands) if (REMOTE_COMMANDS.has(command.name())) command.configureHelp({ showGlobalOptions: true });
  return program;
}

/**
 * `a2a-registry search x | head -1`: when the reader goes away, stop quietly as Unix tools do,
 * instead of dying on an unhandled EPIPE with a stack trace.
 */
function endQuietlyOnClosedPipe(): void {
  let closed = false;
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.listenerCount('error') > 0) continue;
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      if (closed) return; // every later write fails too while the command ends
      closed = true;
      closedPipe();
    });
  }
}

/** Where the command's name is in `args` (after the global options and their values), or -1. */
function commandIndex(args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return -1;
    if (GLOBAL_OPTIONS_WITH_VALUE.has(arg)) {
      i++;
      continue;
    }
    if (!arg.startsWith('-')) return i;
  }
  return -1;
}

/**
 * `help <name>` for a name no command has: the name alone, for commander to say that it is an
 * unknown command and suggest the nearest (`help serach`: "unknown command 'serach' (Did you mean
 * search?)", exit 2). Commander printed the whole help for it, exit 2, without a word on the name.
 */
function unknownHelpTopic(args: readonly string[], program: Command): readonly string[] {
  const at = commandIndex(args);
  const topic = at === -1 ? undefined : args[at + 1];
  if (args[at] !== 'help' || topic === undefined || topic.startsWith('-')) return args;
  if (program.commands.some((c) => c.name() === topic || c.aliases().includes(topic))) return args;
  return [...args.slice(0, at), ...args.slice(at + 1)];
}

/** The commands whose words are a search query (README "Query syntax"). */
const QUERY_COMMANDS: ReadonlySet<string> = new Set(['search', 'watch']);

/**
 * The query's `-word` exclusions (`search weather -station`, as README's query syntax writes
 * them) as words: commander took `-station` for an unknown option (exit 2). A word beginning
 * with one dash that is no option of the command or the program goes after a `--`, with every
 * other word of the query, in their order; options and their values stay before it, so
 * `search -beta --kind agent weather` still filters by kind, `-h` is still help and `--tag -x`
 * still the tag "-x". An unknown `--option` stays an error.
 */
function queryWordsAfterOptions(args: readonly string[], program: Command): readonly string[] {
  const at = commandIndex(args);
  const command = at === -1 ? undefined : program.commands.find((c) => c.name() === args[at]);
  if (!command || !QUERY_COMMANDS.has(command.name())) return args;
  const options = [...command.options, ...program.options];
  const known = (flag: string): Option | undefined => options.find((o) => o.long === flag || o.short === flag);
  const rest = args.slice(at + 1);
  const kept: string[] = [];
  const words: string[] = [];
  let dashWord = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--') {
      words.push(...rest.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      kept.push(arg);
      // Its value, whatever it begins with (`--tag -x`), unless given as --option=value.
      if (!arg.includes('=') && known(arg)?.required && i + 1 < rest.length) kept.push(rest[++i]!);
      continue;
    }
    if (arg.length > 1 && arg.startsWith('-')) {
      const option = known(arg);
      if (option || arg === '-h') {
        kept.push(arg);
        if (option?.required && i + 1 < rest.length) kept.push(rest[++i]!);
        continue;
      }
      dashWord = true;
    }
    words.push(arg);
  }
  if (!dashWord) return args;
  return [...args.slice(0, at + 1), ...kept, '--', ...words];
}

/**
 * An option of the command typed before the command's name (`a2a-registry --json ls`,
 * `a2a-registry --limit 3 ls`), which the program's parser has no such option for: "unknown
 * option '--json'" alone read as if no command took it. Says where it goes, or undefined for any
 * other usage error.
 */
function commandOptionFirst(err: CommanderError, args: readonly string[], program: Command): string | undefined {
  const typed = err.code === 'commander.unknownOption' ? /unknown option '([^']+)'/.exec(err.message)?.[1] : undefined;
  const at = commandIndex(args);
  if (typed === undefined || at === -1 || !args.slice(0, at).includes(typed)) return undefined;
  const flag = typed.split('=')[0]!;
  const commandAt = (i: number) => program.commands.find((c) => c.name() === args[i] || c.aliases().includes(args[i]!));
  const optionOf = (command: Command | undefined) => command?.options.find((o) => o.long === flag || o.short === flag);
  let command = commandAt(at);
  // Typed as `--limit=3`: the hint keeps its value (it suggested `ls --limit ...`, the 3 lost).
  let value = typed.slice(flag.length);
  // The word after an option of the command's that takes a value is that value, not the
  // command's name (commandIndex knows only the program's options): `--limit 3 ls` named no
  // command, and had no hint.
  if (!command && args[at - 1] === typed && !typed.includes('=')) {
    const next = commandAt(at + 1);
    const option = optionOf(next);
    if (option?.required || option?.optional) [command, value] = [next, ` ${args[at]}`];
  }
  if (!optionOf(command)) return undefined;
  return `(${flag} is an option of ${command!.name()}: put it after the command's name, as in a2a-registry ${command!.name()} ${flag}${value} ...)`;
}

/**
 * `a2a-registry -v` or `a2a-registry version`, as other tools print their version: -v is no
 * option here (-V is), and for `version` commander's nearest command was "Did you mean verify?".
 * Commander stops at the first unknown option, so with another one before it (`--json -v`,
 * `--json version`) the error names only that one: the hint is given for those too.
 * Says where the version is, or undefined for any other usage error.
 */
function versionAsked(err: CommanderError, args: readonly string[]): string | undefined {
  const at = commandIndex(args);
  const beforeCommand = at === -1 ? args : args.slice(0, at);
  const unknown = err.code === 'commander.unknownOption' || err.code === 'commander.unknownCommand';
  const asked = unknown && (beforeCommand.includes('-v') || args[at] === 'version');
  return asked ? '(to print the version: a2a-registry --version, or -V)' : undefined;
}

/** Runs the CLI and resolves to the process exit code. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  endQuietlyOnClosedPipe();
  const program = await buildProgram(argv.slice(2));
  process.exitCode = undefined; // commands report their outcome through it
  const args = queryWordsAfterOptions(unknownHelpTopic(argv.slice(2), program), program);
  try {
    await program.parseAsync([...argv.slice(0, 2), ...args]);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end by "throwing" with exit code 0; everything else is usage.
      if (err.exitCode === 0) return EXIT_OK;
      const misplaced = commandOptionFirst(err, args, program) ?? versionAsked(err, args);
      if (misplaced) process.stderr.write(forTerminal(`${misplaced}\n`));
      // Commander has told stderr; with --json a script reads the {"error"} document on stdout
      // too, as for every other failure (--json itself may be what the parser stopped before).
      if (argv.includes('--json')) {
        const jsonLines = JSON_LINES_COMMANDS.has(namedCommand(argv.slice(2))?.names[0] ?? '');
        // One line: commander puts its suggestion on a line of its own ("\n(Did you mean --list?)").
        const message = [err.message.replace(/^error: /, ''), misplaced].filter(Boolean).join(' ').replace(/\s*\n\s*/g, ' ');
        printJson({ ...defaultOutput(), jsonLines }, { error: { code: 'USAGE', message } });
      }
      return EXIT_USAGE;
    }
    throw err;
  }
}

if (isMainModule(import.meta.url)) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(forTerminal(`a2a-registry: ${err instanceof Error ? err.message : String(err)}\n`));
      process.exitCode = EXIT_FAILED;
    },
  );
}
