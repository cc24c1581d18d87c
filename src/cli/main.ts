/**
 * The `a2a-registry` command line. Each command lives in ./commands/<name>.ts and exports a
 * `register(program)` function; add new commands to COMMANDS below.
 *
 * Exit codes (all commands): 0 success, 1 the command ran and found a problem (for `validate`:
 * an invalid, unreadable or non-JSON document), 2 usage error (unknown option, missing argument).
 *
 * Run from source with `node --import tsx src/cli/main.ts ...`; the published entry point is
 * bin/a2a-registry.js, which imports the built dist/src/cli/main.js and calls main().
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { register as registerValidate } from './commands/validate.js';
import { readPackageVersion } from './package-info.js';

export type CommandRegistrar = (program: Command) => void;

/** Every command of the CLI, in the order `--help` lists them. */
const COMMANDS: CommandRegistrar[] = [registerValidate];

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export function buildProgram(): Command {
  const program = new Command('a2a-registry')
    .description('A2A Agent Registry: validate, register and discover A2A agents and MCP servers.')
    .version(readPackageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    // Throw instead of calling process.exit, so main() owns the exit code (2 for usage errors).
    .exitOverride();
  for (const register of COMMANDS) register(program);
  return program;
}

/** Runs the CLI and resolves to the process exit code. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  const program = buildProgram();
  process.exitCode = undefined; // commands report their outcome through it
  try {
    await program.parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end by "throwing" with exit code 0; everything else is usage.
      return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    throw err;
  }
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`a2a-registry: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = EXIT_FAILED;
    },
  );
}
