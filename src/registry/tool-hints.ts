/**
 * An MCP tool's annotation hints as the registry counts them: what search filters on
 * (describe.ts) and what the web page shows (web/src/entry/mcp-view.tsx). No imports: the page's
 * bundle takes this module as it is.
 */

export type ToolHintKey = 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint';
export type ToolHints = Record<ToolHintKey, boolean>;

/** The MCP specification's value of a hint a tool does not declare. */
export const TOOL_HINT_DEFAULTS: Readonly<ToolHints> = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

/**
 * MCP: destructiveHint and idempotentHint are "meaningful only when readOnlyHint == false". A
 * tool that changes nothing destroys nothing and has no further effect when called again, so a
 * read-only tool is not destructive and is idempotent, whatever those hints say or their
 * defaults would make it (otherwise `destructive: false`, "safe tools", left out every read-only
 * tool that did not also spell out destructiveHint: false).
 */
export const READ_ONLY_IMPLIES: Readonly<Partial<ToolHints>> = { destructiveHint: false, idempotentHint: true };

/** Whether a hint means something for this tool: destructiveHint and idempotentHint do not for a read-only one. */
export const hintApplies = (key: ToolHintKey, readOnly: boolean): boolean => !(readOnly && key in READ_ONLY_IMPLIES);

/** A tool's hints from its `annotations` (any JSON): declared booleans, else the MCP defaults; a read-only tool's as READ_ONLY_IMPLIES. */
export function toolHints(annotations: unknown): ToolHints {
  const a = typeof annotations === 'object' && annotations !== null && !Array.isArray(annotations) ? (annotations as Record<string, unknown>) : {};
  const hint = (key: ToolHintKey): boolean => {
    const declared = a[key];
    return typeof declared === 'boolean' ? declared : TOOL_HINT_DEFAULTS[key];
  };
  const readOnly = hint('readOnlyHint');
  const implied = (key: ToolHintKey): boolean => (hintApplies(key, readOnly) ? hint(key) : READ_ONLY_IMPLIES[key]!);
  return {
    readOnlyHint: readOnly,
    destructiveHint: implied('destructiveHint'),
    idempotentHint: implied('idempotentHint'),
    openWorldHint: hint('openWorldHint'),
  };
}
