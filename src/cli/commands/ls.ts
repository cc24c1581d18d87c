/**
 * `a2a-registry ls`: entries page by page, newest registered first (list's default order, which an
 * update does not change: the UPDATED column is not the order), optionally only one kind, one owner,
 * or the caller's own (`--mine`: the registry resolves the token's principal, so the CLI never
 * needs to know who its token belongs to).
 *
 * Exit code: 0, 1 declined (e.g. --mine without a token), 2 usage, 3 unreachable.
 */
import { Command, Option } from 'commander';
import type { EntryView, ListPage, ListRequest } from '../../contract/types.js';
import { dataPart, isObject } from '../connection.js';
import { EXIT_OK, Table, printJson, styles, type Output, type TypedArguments } from '../output.js';
import { runRemote } from '../remote.js';
import { nonEmpty, principal } from '../option-values.js';
import { intInRange } from './search.js';

interface LsOptions {
  kind?: 'agent' | 'mcp-server';
  mine?: boolean;
  owner?: string;
  health?: 'ok' | 'unreachable' | 'invalid';
  verified?: boolean;
  limit?: number;
  pageToken?: string;
  json: boolean;
}

export function listRequest(o: LsOptions): ListRequest {
  const filter: NonNullable<ListRequest['filter']> = {};
  if (o.kind) filter.kind = o.kind;
  if (o.owner) filter.owner = o.owner;
  if (o.mine) filter.mine = true;
  if (o.health) filter.health = o.health;
  if (o.verified) filter.verified = true;
  const request: ListRequest = {};
  if (Object.keys(filter).length > 0) request.filter = filter;
  if (o.limit !== undefined) request.pageSize = o.limit;
  if (o.pageToken) request.pageToken = o.pageToken;
  return request;
}

/** Where the list's arguments come from on ls's command line (as listRequest sends them). */
const ARGUMENTS: TypedArguments = {
  operation: 'list',
  from: {
    '/filter/kind': '--kind',
    '/filter/owner': '--owner',
    '/filter/mine': '--mine',
    '/filter/health': '--health',
    '/filter/verified': '--verified',
    '/pageSize': '--limit',
    '/pageToken': '--page-token',
  },
};

const TABLE = [
  { title: 'NAME', width: 26, min: 14 },
  { title: 'KIND', width: 10 },
  { title: 'OWNER', width: 12, min: 8 },
  { title: 'REV', width: 3 },
  { title: 'UPDATED', width: 20 },
  { title: 'ID', width: 36 },
];

function describePage(page: ListPage, o: Output): string {
  const s = styles(o.color);
  if (page.entries.length === 0) return 'No entries.\n';
  const table = new Table(TABLE, s, o.columns);
  let text = table.header();
  for (const e of page.entries) text += table.row([e.name, e.kind, e.owner, String(e.revision), e.updatedAt.replace(/\.\d+Z$/, 'Z'), e.id]);
  if (page.nextPageToken) text += s.dim(`More: run the same command with --page-token ${page.nextPageToken}`) + '\n';
  return text;
}

export function register(program: Command): void {
  program
    .command('ls')
    .alias('list')
    .description('list entries, newest registered first (an update does not move one)')
    .addOption(new Option('--kind <kind>', 'only agents or only MCP servers').choices(['agent', 'mcp-server']))
    .addOption(new Option('--mine', "only the entries of this token's principal (needs a token)").conflicts('owner'))
    .option('--owner <principal>', 'only the entries of this principal', principal)
    .addOption(new Option('--health <status>', 'only entries whose latest live check was ok, unreachable or invalid').choices(['ok', 'unreachable', 'invalid']))
    .option('--verified', "only agents whose card a key the registry trusts signed")
    .addOption(new Option('--limit <n>', 'entries per page, 1 to 100 (registry default 50)').argParser(intInRange(1, 100)))
    .option('--page-token <token>', 'the next page, as printed after the previous one', nonEmpty)
    .option('--json', 'print the page as JSON ({entries, nextPageToken?})', false)
    .addHelpText('after', '\nExit status: 0, 1 declined by the registry (e.g. --mine without a token), 2 usage, 3 registry unreachable.')
    .action(async (options: LsOptions, command: Command) => {
      const request = listRequest(options);
      process.exitCode = await runRemote(command, async ({ client, out, json }) => {
        const { data } = await client.send([dataPart({ list: request })]);
        if (json) {
          printJson(out, data);
          return EXIT_OK;
        }
        const entries = Array.isArray(data.entries) ? data.entries.filter((e): e is EntryView => isObject(e) && typeof e.id === 'string') : [];
        const page: ListPage = { entries };
        if (typeof data.nextPageToken === 'string') page.nextPageToken = data.nextPageToken;
        out.out(describePage(page, out));
        return EXIT_OK;
      }, { arguments: ARGUMENTS });
    });
}
