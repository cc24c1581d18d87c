/**
 * `a2a-registry get <id>`: one entry, readable (its interfaces, skills or tools), as JSON with
 * its stored document (`--json`), or only the document as registered (`--document`, ready to be
 * saved and registered again).
 *
 * Exit code: 0 found, 1 declined (NOT_FOUND for an unknown id or revision), 2 usage, 3 unreachable.
 */
import { Command, Option } from 'commander';
import type { EntryView } from '../../contract/types.js';
import { dataPart, isObject, type JsonObject } from '../connection.js';
import { EXIT_OK, countOf, printJson, styles, type Output, type TypedArguments } from '../output.js';
import { runRemote } from '../remote.js';
import { nonEmpty } from '../option-values.js';
import { intInRange } from './search.js';

interface GetOptions {
  revision?: number;
  document: boolean;
  json: boolean;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const objects = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * A text of the document (or a message quoting one) printed after a label: its line breaks
 * continue it under its first line. Descriptions and tags may hold line breaks (validation allows
 * them in running text), and printed as they were, the line after one started at the margin and
 * read as a field of the registry's own: a description "Weather\n  owner       admin" showed an
 * entry of alice's as admin's, a tag a forged interface line. (An empty line stays empty.)
 */
const continued = (text: string, indent: number): string => text.replace(/\r?\n(?!\r?\n|$)/g, `\n${' '.repeat(indent)}`).replace(/\r\n/g, '\n');
/** A one-line value (a tag, inside [a, b]): its white space runs, line breaks too, as one space. */
const oneLine = (text: string): string => text.replace(/\s+/g, ' ');

/** Skills of a card, or tools of an MCP document: what a person looks for after the name. */
function contents(entry: EntryView, o: Output): string {
  const s = styles(o.color);
  const doc = entry.document;
  if (!isObject(doc)) return '';
  let text = '';
  if (entry.kind === 'agent') {
    const skills = objects(doc.skills);
    if (skills.length > 0) text += `  skills\n`;
    for (const k of skills) {
      const tags = strings(k.tags);
      text += `    ${s.bold(str(k.name) || str(k.id))} ${s.dim(`(${str(k.id)})`)}${tags.length ? ` [${tags.map(oneLine).join(', ')}]` : ''}\n`;
      if (str(k.description)) text += `      ${continued(str(k.description), 6)}\n`;
    }
  } else {
    const toolspec = isObject(doc.toolspec) ? doc.toolspec : {};
    const tools = objects(toolspec.tools);
    if (tools.length > 0) text += `  tools\n`;
    for (const t of tools) {
      const hints = isObject(t.annotations) ? t.annotations : {};
      const flags = [hints.readOnlyHint === true ? 'read-only' : '', hints.destructiveHint === true ? 'destructive' : ''].filter(Boolean);
      text += `    ${s.bold(str(t.name))}${str(t.title) ? ` "${str(t.title)}"` : ''}${flags.length ? s.dim(` (${flags.join(', ')})`) : ''}\n`;
      if (str(t.description)) text += `      ${continued(str(t.description), 6)}\n`;
    }
  }
  return text;
}

export function describeEntry(e: EntryView, o: Output): string {
  const s = styles(o.color);
  const version = e.protocolVersion ? `, A2A ${e.protocolVersion}` : '';
  let text = `${s.bold(e.name)} ${s.dim(`(${e.kind}${version})`)}\n`;
  text += `  id          ${e.id}\n`;
  // An older revision (--revision) says so, and which is current: its document is not the entry's now.
  const current = Array.isArray(e.revisions) ? e.revisions[0]?.revision : undefined;
  const older = typeof current === 'number' && current !== e.revision;
  text += `  revision    ${e.revision}${older ? ` ${s.dim(`(not the current one: the entry is at revision ${current})`)}` : ''}\n`;
  text += `  owner       ${e.owner}\n`;
  text += `  created     ${e.createdAt}\n  updated     ${e.updatedAt}\n`;
  if (e.description) text += `  description ${continued(e.description, 14)}\n`;
  e.interfaces.forEach((i, n) => {
    const binding = `${i.protocolBinding}${i.protocolVersion ? ` ${i.protocolVersion}` : ''}`.padEnd(14);
    text += `  ${n === 0 ? 'interfaces ' : '           '} ${binding}  ${i.url}\n`;
  });
  // Source, health and drift are the entry's state now, not the older revision's: labelled so,
  // and drift names the revision the live document is compared with (the current one).
  const now = older ? ' now' : '    ';
  if (e.source) text += `  source${now}  ${e.source.url} ${s.dim(`(fetched ${e.source.fetchedAt})`)}\n`;
  if (e.health) {
    // Failures of several kinds (invalid, then unreachable): the run began before this status.
    const run = e.health.failingSince && e.health.failingSince !== e.health.since ? ` since ${e.health.failingSince}` : '';
    const failing = e.health.status === 'ok' ? '' : `, ${countOf(e.health.failures, 'failed check')} in a row${run}${e.health.message ? `: ${continued(e.health.message, 14)}` : ''}`;
    text += `  health${now}  ${e.health.status} since ${e.health.since} ${s.dim(`(checked ${e.health.checkedAt})`)}${failing}\n`;
  }
  if (e.drift) text += older ? `  drift now   the live document differs from the current revision, ${current}\n` : `  drift       the live document differs from this revision\n`;
  return text + contents(e, o);
}

/** Where get's arguments come from on its command line. */
const ARGUMENTS: TypedArguments = { operation: 'get', from: { '/id': '<id>', '/revision': '--revision' } };

export function register(program: Command): void {
  program
    .command('get')
    .description('show one entry: its interfaces, skills or tools; --json for the whole entry with its document')
    .argument('<id>', 'the entry id, as register, search and ls print it', nonEmpty)
    .addOption(new Option('--revision <n>', 'an older revision of the entry').argParser(intInRange(1, Number.MAX_SAFE_INTEGER)))
    .addOption(new Option('--document', 'print only the stored document (the card, or {mcpServer, toolspec}) as JSON').conflicts('json'))
    .option('--json', 'print the whole entry, with its document, as JSON', false)
    .addHelpText('after', '\nExit status: 0 found, 1 declined (NOT_FOUND for an unknown id or revision), 2 usage, 3 registry unreachable.')
    .action(async (id: string, options: GetOptions, command: Command) => {
      process.exitCode = await runRemote(command, async ({ client, out, json }) => {
        const { data } = await client.send([dataPart({ get: options.revision === undefined ? { id } : { id, revision: options.revision } })]);
        const entry = data as unknown as EntryView;
        if (options.document) printJson(out, entry.document ?? null);
        else if (json) printJson(out, data);
        else out.out(describeEntry({ ...entry, interfaces: Array.isArray(entry.interfaces) ? entry.interfaces : [] }, out));
        return EXIT_OK;
      }, { arguments: ARGUMENTS });
    });
}
