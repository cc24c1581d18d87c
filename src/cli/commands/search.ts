/**
 * `a2a-registry search [words...]`: ranked discovery over agents, skills and MCP tools. Sent as a
 * streaming message, so the table grows as the registry's `search-results` chunks arrive rather
 * than after the whole page; `--json` prints the assembled page once the stream ends.
 *
 * Exit code: 0 (also with no matches), 1 declined, 2 usage, 3 unreachable.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { SearchFilter, SearchHit, SearchMatch, SearchPage, SearchRequest } from '../../contract/types.js';

type HealthFilter = NonNullable<SearchFilter['health']>;
import { dataPart, isObject } from '../connection.js';
import { EXIT_OK, Table, countOf, printJson, styles, type Output, type TypedArguments } from '../output.js';
import { runRemote } from '../remote.js';
import { nonEmpty } from '../option-values.js';
import { noMatchesText, totalText } from '../../lib/total-text.js';

export interface SearchOptions {
  tag?: string[];
  kind?: 'agent' | 'mcp-server';
  binding?: string;
  protocolVersion?: string;
  inputMode?: string[];
  outputMode?: string[];
  streaming?: boolean;
  readOnly?: boolean;
  health?: HealthFilter;
  verified?: boolean;
  limit?: number;
  pageToken?: string;
  json: boolean;
}

export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** A repeatable option whose every value must say something. */
export const collectNonEmpty = (value: string, previous: string[] | undefined): string[] => collect(nonEmpty(value), previous);

/**
 * A whole number from `min` to `max`, whose refusal says so in either case (not a number, out of
 * range). A `max` of Number.MAX_SAFE_INTEGER is no limit of the option's but JavaScript's, and
 * is said as "from 1 up": `get --revision 0` said "must be from 1 to 9007199254740991".
 */
export function intInRange(min: number, max: number) {
  const range = max === Number.MAX_SAFE_INTEGER ? `from ${min} up` : `from ${min} to ${max}`;
  return (value: string): number => {
    const n = Number(value);
    if (!/^[0-9]+$/.test(value.trim()) || n < min || n > max) throw new InvalidArgumentError(`must be a whole number ${range}`);
    return n;
  };
}

export function searchRequest(words: string[], o: SearchOptions): SearchRequest {
  const filter: SearchFilter = {};
  if (o.kind) filter.kind = o.kind;
  if (o.tag?.length) filter.tags = o.tag;
  if (o.inputMode?.length) filter.inputModes = o.inputMode;
  if (o.outputMode?.length) filter.outputModes = o.outputMode;
  if (o.binding) filter.protocolBinding = o.binding;
  if (o.protocolVersion) filter.protocolVersion = o.protocolVersion;
  if (o.streaming !== undefined) filter.streaming = o.streaming;
  if (o.readOnly) filter.readOnly = true;
  if (o.health) filter.health = o.health;
  if (o.verified) filter.verified = true;
  // The registry's default, one result per entry with its other matches under `matches`: a page
  // of --limit hits is then --limit rows, `total` counts entries as every other door's does, and
  // the next page starts at the next entry. Results per match, folded here, showed fewer rows
  // than --limit and printed an entry again on the next page when more of its skills matched.
  const request: SearchRequest = {};
  const query = words.join(' ').trim();
  if (query) request.query = query;
  if (Object.keys(filter).length > 0) request.filter = filter;
  if (o.limit !== undefined) request.limit = o.limit;
  if (o.pageToken) request.pageToken = o.pageToken;
  return request;
}

/** A hit as the CLI shows it: one per entry, with every other part of the entry that matched. */
export interface EntryHit extends SearchHit {
  matches?: SearchMatch[];
}

const describeMatch = (m: SearchMatch): string =>
  m.type === 'skill' || m.type === 'tool' ? `${m.type} "${m.name}"` : m.type === 'mcp-server' ? 'server' : 'agent';

/**
 * What inside the entry the words matched, best first: `skill "Translate invoice" (name, tags)`
 * for one match, `skill "Extract invoice", skill "Translate invoice", agent` for several (the
 * fields of each are in --json).
 */
export function matchText(hit: EntryHit): string {
  const others = hit.matches ?? [];
  if (others.length > 0) return [hit.match, ...others].map(describeMatch).join(', ');
  const fields = hit.match.fields.length > 0 ? ` (${hit.match.fields.join(', ')})` : '';
  return `${describeMatch(hit.match)}${fields}${hit.moreInEntry ? ` +${hit.moreInEntry}` : ''}`;
}

const isMatch = (m: unknown): m is SearchMatch => isObject(m) && typeof m.type === 'string' && typeof m.name === 'string' && Array.isArray(m.fields);

const hitsOf = (data: Record<string, unknown>): EntryHit[] =>
  Array.isArray(data.results)
    ? data.results
        .filter((h): h is EntryHit => isObject(h) && typeof h.id === 'string' && isMatch(h.match))
        .map((h) => (Array.isArray(h.matches) ? { ...h, matches: h.matches.filter(isMatch) } : h))
    : [];

/**
 * Folds hits into one per entry, in rank order: a registry that answers one hit per skill or
 * tool (an agent whose card and one of its skills both match comes back twice) and one that
 * already folds them into `matches` print the same. `seen` carries the entries of earlier
 * chunks of a stream, whose rows are already printed: a later hit of one of them only adds to
 * its `matches` (visible with --json).
 */
export function foldByEntry(hits: readonly EntryHit[], seen: Map<string, EntryHit>): EntryHit[] {
  const fresh: EntryHit[] = [];
  for (const hit of hits) {
    const first = seen.get(hit.id);
    if (!first) {
      const entry: EntryHit = { ...hit, matches: [...(hit.matches ?? [])] };
      seen.set(hit.id, entry);
      fresh.push(entry);
      continue;
    }
    first.matches = [...(first.matches ?? []), hit.match, ...(hit.matches ?? [])];
  }
  return fresh;
}

/** The endpoint comes last, so a long URL is never cut; the id is what get and rm take. */
const TABLE = [
  { title: 'NAME', width: 24, min: 14 },
  { title: 'KIND', width: 10 },
  { title: 'MATCHED', width: 40, min: 18 },
  { title: 'ID', width: 36 },
  { title: 'ENDPOINT', width: 0 },
];

function footer(page: Pick<SearchPage, 'total' | 'totalExact' | 'nextPageToken' | 'reason'>, shown: number, o: Output): string {
  const s = styles(o.color);
  if (page.total === 0) return `${noMatchesText(page.reason)}\n`;
  const exact = page.totalExact !== false;
  // "at least 1 match" would be wrong: the registry stopped counting past a limit, so it is many.
  const matches = `${totalText(page.total, exact)} ${page.total === 1 && exact ? 'match' : 'matches'}`;
  let text = s.dim(`${countOf(shown, 'entry', 'entries')} shown; ${matches} in all.`) + '\n';
  if (page.nextPageToken) text += s.dim(`More: run the same search with --page-token ${page.nextPageToken}`) + '\n';
  return text;
}

/**
 * Where a search's (and a watch's) query and filter come from on the command line, as searchRequest
 * sends them from these options. The streaming filter is named by the option that set it (the
 * last of them typed, as commander reads them): a refusal of `"streaming": false` names
 * --no-streaming, not "--streaming/--no-streaming", which the user never typed.
 */
export const queryArguments = (o: Pick<SearchOptions, 'streaming'>): TypedArguments['from'] => ({
  '/query': '[words...]',
  '/filter/tags': '--tag',
  '/filter/kind': '--kind',
  '/filter/protocolBinding': '--binding',
  '/filter/protocolVersion': '--protocol-version',
  '/filter/inputModes': '--input-mode',
  '/filter/outputModes': '--output-mode',
  '/filter/streaming': o.streaming === false ? '--no-streaming' : '--streaming',
  '/filter/readOnly': '--read-only',
  '/filter/health': '--health',
  '/filter/verified': '--verified',
});

/** Where a search's arguments come from on its command line. */
export const searchArguments = (o: SearchOptions): TypedArguments => ({ operation: 'search', from: { ...queryArguments(o), '/limit': '--limit', '/pageToken': '--page-token' } });

/** The filter options of a search (also a watch's). */
export function filterOptions(command: Command): Command {
  return command
    .option('--tag <tag>', 'only skills tagged so (repeatable: any of them)', collectNonEmpty)
    .addOption(new Option('--kind <kind>', 'only agents or only MCP servers').choices(['agent', 'mcp-server']))
    .option('--binding <binding>', 'only entries with an interface of this binding: JSONRPC, HTTP+JSON, GRPC, MCP', nonEmpty)
    .option('--protocol-version <version>', 'only entries with an interface of this A2A version, e.g. 1.0 or 0.3', nonEmpty)
    .option('--input-mode <mime>', 'only skills accepting this media type (repeatable: any of them)', collectNonEmpty)
    .option('--output-mode <mime>', 'only skills producing this media type (repeatable: any of them)', collectNonEmpty)
    // As the registry reads the filter (src/search/filters.ts): MCP servers count as not streaming.
    .option('--streaming', 'only agents that stream (their card\'s capabilities.streaming)')
    .option('--no-streaming', 'only entries that do not stream: agents that do not, and MCP servers (with --kind agent: agents only)')
    .option('--read-only', 'only MCP tools that are read-only')
    .addOption(
      new Option('--health <status>', 'only entries whose latest live check was ok, unreachable or invalid; any: also those hidden for failing long').choices([
        'ok',
        'unreachable',
        'invalid',
        'any',
      ]),
    )
    .option('--verified', "only agents whose card a key the registry trusts signed");
}

export function register(program: Command): void {
  filterOptions(
    program
      .command('search')
      .description('find agents, skills and MCP tools by keywords and filters; results print as they stream in')
      .argument('[words...]', 'keywords, matched against names, descriptions, skills (tags, examples) and tools'),
  )
    .addOption(new Option('--limit <n>', 'results per page, 1 to 100 (registry default 20)').argParser(intInRange(1, 100)))
    .option('--page-token <token>', 'the next page, as printed after the previous one', nonEmpty)
    .option('--json', 'print the page as JSON ({results, total, nextPageToken?}) once complete', false)
    .addHelpText(
      'after',
      '\nExit status: 0 (also when nothing matched), 1 declined by the registry, 2 usage, 3 registry unreachable.\n' +
        'Examples:\n  a2a-registry search translate invoices\n  a2a-registry search weather -beta       (-word leaves out what has the word, as NOT word)\n' +
        '  a2a-registry search --kind agent --tag finance --input-mode application/pdf\n' +
        '  a2a-registry search files --kind mcp-server --read-only --json',
    )
    .action(async (words: string[], options: SearchOptions, command: Command) => {
      const request = searchRequest(words, options);
      process.exitCode = await runRemote(command, async ({ client, out, json }) => {
        const table = new Table(TABLE, styles(out.color), out.columns);
        const page: Omit<SearchPage, 'results'> & { results: EntryHit[] } = { results: [], total: 0 };
        const seen = new Map<string, EntryHit>();
        for await (const chunk of client.stream([dataPart({ search: request })])) {
          const hits = foldByEntry(hitsOf(chunk.data), seen);
          if (!json && hits.length > 0) {
            // Written at once, chunk by chunk: a person sees the best matches before the rest arrive.
            let text = page.results.length === 0 ? table.header() : '';
            for (const h of hits) text += table.row([h.name, h.kind, matchText(h), h.id, h.interfaces[0]?.url ?? '']);
            out.out(text);
          }
          page.results.push(...hits);
          if (typeof chunk.data.total === 'number') page.total = chunk.data.total;
          if (chunk.data.totalExact === false) page.totalExact = false;
          if (typeof chunk.data.nextPageToken === 'string') page.nextPageToken = chunk.data.nextPageToken;
          if (typeof chunk.data.reason === 'string') page.reason = chunk.data.reason;
        }
        if (json) printJson(out, { ...page, results: page.results.map(({ matches, ...hit }) => (matches?.length ? { ...hit, matches } : hit)) });
        else out.out(footer(page, page.results.length, out));
        return EXIT_OK;
      }, { arguments: searchArguments(options) });
    });
}
