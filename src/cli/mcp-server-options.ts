/**
 * The --mcp-* options, which give an MCP toolspec its server (name, URL, description, version):
 * one set for `register` and `validate`, so both take the same names, refuse the same empty
 * values, lay them over a stored document's {"mcpServer"} the same way, and name a finding of
 * a value given here at its option, and take a document beside them as the same kind (or refuse
 * it alike). Loads nothing but commander and ./document-kind.ts: `validate` runs offline.
 */
import { Option, type Command } from 'commander';
import { isObject, type JsonObject } from '../lib/json.js';
import { detectKind, isAgentCardShaped, type DocumentKind } from './document-kind.js';
import { nonEmpty } from './option-values.js';
import type { Locate } from './output.js';

export interface McpServerOptions {
  mcpName?: string;
  mcpUrl?: string;
  mcpDescription?: string;
  mcpVersion?: string;
}

/** Each field of the server, the option that gives it, and the option's attribute. */
const FIELDS = [
  { field: 'name', option: '--mcp-name', key: 'mcpName' },
  { field: 'url', option: '--mcp-url', key: 'mcpUrl' },
  { field: 'description', option: '--mcp-description', key: 'mcpDescription' },
  { field: 'version', option: '--mcp-version', key: 'mcpVersion' },
] as const;

export const NEEDS_SERVER = 'an MCP toolspec needs its server: give --mcp-name <name> and --mcp-url <url>';

/** --mcp-* options that cannot go with the document given: a usage error of register and validate alike. */
export class ServerOptionsMisplaced extends Error {}

/**
 * What a document is taken as beside the --mcp-* options: what `register` sends it as and
 * `validate` checks it as. A stored MCP document is one whatever the options; without them, what
 * it holds says (detectKind). The options give a toolspec its server, so with any of them the
 * document is the toolspec they go with, unless it is an agent card beyond doubt: then they are
 * refused (ServerOptionsMisplaced), naming each as typed (`typedAs`: validate's old names).
 * register sent such a card as a toolspec ("/toolspec/tools: required field "tools" is missing" at
 * card.json:1:1) and validate checked the card without a word of them, though they were typed to be used.
 */
export function documentKindBeside(file: string, doc: unknown, options: McpServerOptions, command: 'register' | 'validate', typedAs: Readonly<Record<string, string>> = {}): DocumentKind {
  const kind = detectKind(doc);
  const given = FIELDS.filter(({ key }) => options[key] !== undefined).map(({ option }) => typedAs[option] ?? option);
  if (kind === 'mcp-server' || given.length === 0) return kind;
  if (isAgentCardShaped(doc)) {
    const [them, give] = given.length === 1 ? ['it', 'gives'] : ['them', 'give'];
    const named = given.length === 1 ? given[0]! : `${given.slice(0, -1).join(', ')} and ${given.at(-1)!}`;
    throw new ServerOptionsMisplaced(`${file} is an A2A agent card, and ${named} ${give} an MCP toolspec its server: leave ${them} out to ${command} the card, or give the toolspec's file`);
  }
  return 'mcp-toolspec';
}

/**
 * Adds the --mcp-* options. An empty value (`--mcp-url "$URL"` with the variable unset) is a
 * usage error: over a document's own server it would replace a good value with nothing.
 */
export function mcpServerOptions(command: Command, what: { name: string; url: string; description: string; version: string }): Command {
  return command
    .addOption(new Option('--mcp-name <name>', what.name).argParser(nonEmpty))
    .addOption(new Option('--mcp-url <url>', what.url).argParser(nonEmpty))
    .addOption(new Option('--mcp-description <text>', what.description).argParser(nonEmpty))
    .addOption(new Option('--mcp-version <version>', what.version).argParser(nonEmpty));
}

/** The server fields the options give. */
export function serverFromOptions(options: McpServerOptions): JsonObject {
  const server: JsonObject = {};
  for (const { field, key } of FIELDS) if (options[key] !== undefined) server[field] = options[key];
  return server;
}

/**
 * The server of a stored MCP document ({"mcpServer", "toolspec"}) with the options laid over
 * it: what `get --document` printed registers (and validates) again with a field changed.
 */
export function serverOver(documentServer: unknown, options: McpServerOptions): JsonObject {
  return { ...(isObject(documentServer) ? documentServer : {}), ...serverFromOptions(options) };
}

/**
 * Places a finding of the server (/mcpServer/url) at the option that gave its value, named as
 * typed (`typedAs`: validate's old names); any other path, and a field the file gave, `inFile`.
 */
export function locateServerOptions(options: McpServerOptions, inFile: Locate, typedAs: Readonly<Record<string, string>> = {}): Locate {
  return (pointer) => {
    const given = FIELDS.find(({ field, key }) => options[key] !== undefined && (pointer === `/mcpServer/${field}` || pointer.startsWith(`/mcpServer/${field}/`)));
    return given ? { typed: typedAs[given.option] ?? given.option } : inFile(pointer);
  };
}
