/**
 * The --mcp-* options, which give an MCP toolspec its server (name, URL, description, version):
 * one set for `register` and `validate`, so both take the same names, refuse the same empty
 * values, lay them over a stored document's {"mcpServer"} the same way, and name a finding of
 * a value given here at its option. Loads nothing but commander: `validate` runs offline.
 */
import { Option, type Command } from 'commander';
import { isObject, type JsonObject } from '../lib/json.js';
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
