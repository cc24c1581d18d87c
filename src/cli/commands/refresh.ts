/**
 * `a2a-registry refresh <id>`: has the registry fetch an entry's document from its source now
 * (entries registered with --url or --fetch-tools; its owner or an admin).
 *
 * Exit code: 0 refreshed (changed or not), 1 declined (the fetch failed, the document is no
 * longer valid, NOT_FOUND, FORBIDDEN, no source), 2 usage, 3 unreachable.
 */
import type { Command } from 'commander';
import type { RegistrationResult } from '../../contract/types.js';
import { RegistryDeclined, dataPart, type JsonObject } from '../connection.js';
import { EXIT_OK, printJson, styles, type TypedArguments } from '../output.js';
import { runRemote } from '../remote.js';
import { nonEmpty } from '../option-values.js';

/**
 * The registry's advice for an entry registered inline names the A2A request that registers by
 * URL ({"register": {"url": ...}}, "fetchTools": true); the user types commands: say those.
 */
function inCommandTerms(err: RegistryDeclined): RegistryDeclined {
  const message = err.error.message
    .replace(/\(\{"register": \{"url": "([^"]*)"\}\}\)/, '(a2a-registry register --url $1)')
    .replace(/with "fetchTools": true/, 'with a2a-registry register --fetch-tools --mcp-name <name> --mcp-url <url>');
  return message === err.error.message ? err : new RegistryDeclined(err.state, { ...err.error, message });
}

/** Where refresh's arguments come from on its command line. */
const ARGUMENTS: TypedArguments = { operation: 'refresh', from: { '/id': '<id>' } };

export function register(program: Command): void {
  program
    .command('refresh')
    .description('fetch an entry again from its source now (entries registered with --url or --fetch-tools)')
    .argument('<id>', 'the entry id', nonEmpty)
    .option('--json', 'print the result as JSON', false)
    .addHelpText('after', '\nExit status: 0 refreshed (changed or not), 1 declined (fetch failed, invalid, NOT_FOUND, FORBIDDEN), 2 usage, 3 registry unreachable.')
    .action(async (id: string, _options: { json: boolean }, command: Command) => {
      process.exitCode = await runRemote(command, async ({ client, out, json }) => {
        let data: JsonObject;
        try {
          ({ data } = await client.send([dataPart({ refresh: { id } })]));
        } catch (err) {
          throw err instanceof RegistryDeclined ? inCommandTerms(err) : err;
        }
        if (json) {
          printJson(out, data);
          return EXIT_OK;
        }
        const r = data as unknown as RegistrationResult;
        const s = styles(out.color);
        const head = r.changed ? s.green(`✓ refreshed: revision ${r.revision ?? '?'}`) : s.green(`✓ unchanged ${s.dim(`(revision ${r.revision ?? '?'})`)}`);
        // The id the registry answered (stored lowercase, as register and ls print it), not as typed.
        out.out(`${head}\n  id        ${typeof r.id === 'string' ? r.id : id}\n${r.source ? `  source    ${r.source.url}\n` : ''}${r.health ? `  health    ${r.health.status}\n` : ''}`);
        return EXIT_OK;
      }, { arguments: ARGUMENTS });
    });
}
