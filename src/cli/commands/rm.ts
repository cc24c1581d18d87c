/**
 * `a2a-registry rm <id>`: unregisters an entry (its owner, or an admin).
 *
 * Exit code: 0 removed, 1 declined (NOT_FOUND, FORBIDDEN, UNAUTHENTICATED), 2 usage, 3 unreachable.
 */
import type { Command } from 'commander';
import { dataPart } from '../connection.js';
import { EXIT_OK, printJson, styles, type TypedArguments } from '../output.js';
import { runRemote } from '../remote.js';
import { nonEmpty } from '../option-values.js';

/** Where unregister's arguments come from on rm's command line. */
const ARGUMENTS: TypedArguments = { operation: 'unregister', from: { '/id': '<id>' } };

export function register(program: Command): void {
  program
    .command('rm')
    .alias('unregister')
    .description('unregister an entry (its owner or an admin)')
    .argument('<id>', 'the entry id', nonEmpty)
    .option('--json', 'print the result as JSON', false)
    .addHelpText('after', '\nExit status: 0 removed, 1 declined (NOT_FOUND, FORBIDDEN, UNAUTHENTICATED), 2 usage, 3 registry unreachable.')
    .action(async (id: string, _options: { json: boolean }, command: Command) => {
      process.exitCode = await runRemote(command, async ({ client, out, json }) => {
        const { data } = await client.send([dataPart({ unregister: { id } })]);
        if (json) {
          printJson(out, data);
          return EXIT_OK;
        }
        const s = styles(out.color);
        const name = typeof data.name === 'string' ? ` "${data.name}"` : '';
        const kind = data.kind === 'mcp-server' ? 'MCP server' : 'agent';
        // The id the registry answered (stored lowercase, as search, ls and watches show it), not
        // the id as typed: one typed in capitals was echoed so, an id no other command prints.
        const removed = typeof data.id === 'string' ? data.id : id;
        out.out(`${s.green('✓ unregistered')} ${kind}${name} ${s.dim(`(${removed}, revision ${String(data.revision ?? '?')})`)}\n`);
        return EXIT_OK;
      }, { arguments: ARGUMENTS });
    });
}
