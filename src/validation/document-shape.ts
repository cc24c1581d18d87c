/**
 * What a document is (an agent card, a toolspec, a stored MCP server document), read from its
 * members, and what is wrong with one misshapen (misshapenDocument): one rule for every reader of a
 * whole document, the CLI's validate, register and import and the registry's file parts
 * (operations/request-parser.ts), so that a file is told alike wherever it is sent. Loads no
 * validator (ajv, schemas): the CLI's `register` and the request parser use it without them.
 */
import type { EntryKind, Finding } from '../contract/types.js';
import { isObject } from '../lib/json.js';

export type DocumentKind = EntryKind | 'mcp-toolspec';

/** Members only an agent card has; some cards in the wild also carry a `tools` list of their own. */
const CARD_MARKERS = ['name', 'supportedInterfaces', 'protocolVersion', 'skills', 'capabilities', 'url', 'defaultInputModes', 'defaultOutputModes'];

/** An agent card beyond doubt: a member only cards have, and no `tools` (a toolspec's). */
export const isAgentCardShaped = (doc: unknown): boolean => isObject(doc) && !('tools' in doc) && CARD_MARKERS.some((k) => k in doc);

/**
 * A stored MCP document has both `mcpServer` and `toolspec`; a toolspec (a tools/list result)
 * has `tools` and none of the agent card members, or is a whole tools/list JSON-RPC response;
 * anything else is treated as an agent card.
 */
export function detectKind(doc: unknown): DocumentKind {
  if (isObject(doc) && 'mcpServer' in doc && 'toolspec' in doc) return 'mcp-server';
  if (isObject(doc) && 'tools' in doc && !CARD_MARKERS.some((k) => k in doc)) return 'mcp-toolspec';
  // A saved tools/list response, envelope and all: a toolspec in the wrong wrapping, whose
  // findings say to send its "result" (as an uploaded toolspec.json gets), not a card's errors.
  if (isObject(doc) && 'jsonrpc' in doc && isObject(doc.result) && 'tools' in doc.result) return 'mcp-toolspec';
  if (Array.isArray(doc) && doc.length > 0 && doc.every((t) => isObject(t) && 'inputSchema' in t)) return 'mcp-toolspec';
  return 'agent';
}

/** Why a document is refused for its shape alone (VALIDATION_FAILED): said before any other check, by each command alike. */
export interface Misshapen {
  message: string;
  details: Finding[];
}

/**
 * An MCP server document that is not one: one of its two members, "mcpServer" or "toolspec", and
 * nothing of a card (the other is missing), or its tools beside its server instead of under
 * "toolspec". Taken for an agent card, half a document was refused with eight findings of members
 * a card lacks, none of them the one missing; its tools beside its server were checked as a
 * toolspec with a stray "mcpServer" in it (`validate` said valid, `register` asked for the
 * --mcp-* options the file already gave, and with them stored the server inside the toolspec).
 * The registry's file parts misread them alike (half of one as a card, tools beside a server as a
 * toolspec stored with "mcpServer" inside it), and are told the same words.
 * Undefined for any other document, which its kind's checks then judge.
 */
export function misshapenDocument(doc: unknown): Misshapen | undefined {
  if (!isObject(doc)) return undefined;
  const kind = detectKind(doc);
  if (kind === 'agent' && !isAgentCardShaped(doc)) {
    const server = 'mcpServer' in doc;
    if (server === 'toolspec' in doc) return undefined;
    const missing = server ? 'toolspec' : 'mcpServer';
    const hint = server
      ? 'Add the server\'s tools (its tools/list result): {"mcpServer": {...}, "toolspec": {"tools": [...]}}.'
      : 'Add the server whose tools these are: {"mcpServer": {"name": "files", "url": "https://mcp.example.com/mcp"}, "toolspec": {...}}.';
    return {
      message: `An MCP server document needs both "mcpServer" and "toolspec"; this one has no "${missing}".`,
      details: [{ path: `/${missing}`, rule: 'required', message: `required field "${missing}" is missing`, hint }],
    };
  }
  if (kind === 'mcp-toolspec' && 'mcpServer' in doc && 'tools' in doc) {
    return {
      message: 'An MCP server document keeps its tools under "toolspec"; this one has "tools" beside "mcpServer".',
      details: [{ path: '/tools', rule: 'misplaced', message: '"tools" belongs inside "toolspec"', hint: 'Move it: {"mcpServer": {...}, "toolspec": {"tools": [...]}}.' }],
    };
  }
  return undefined;
}
