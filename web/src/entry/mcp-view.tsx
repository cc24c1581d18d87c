/** An MCP server entry ({mcpServer, toolspec}) rendered for people: the server, its tools and their hints. */
import { hintApplies, TOOL_HINT_DEFAULTS, toolHints } from '../../../src/registry/tool-hints';
import { cardAnchors } from '../card-anchor';
import { ExternalLink } from '../components';
import { FoldedCards } from './folded-cards';
import { arr, obj, pretty, str, strings, type Json } from './untrusted';

/**
 * The MCP tool annotations, each with the default the MCP specification gives it when absent
 * (TOOL_HINT_DEFAULTS, the registry's own). `destructiveHint` and `idempotentHint` only mean
 * something for a tool that is not read-only: a read-only one is not destructive and idempotent,
 * as search counts it (hintApplies), so they are not shown for it.
 */
const HINTS = [
  { key: 'readOnlyHint', yes: 'Read-only', no: 'May modify its environment' },
  { key: 'destructiveHint', yes: 'Destructive', no: 'Not destructive' },
  { key: 'idempotentHint', yes: 'Idempotent', no: 'Not idempotent' },
  { key: 'openWorldHint', yes: 'Open world', no: 'Closed world' },
] as const;

/** `matched` and `target`: the tools a search matched and the one the URL points at, shown however many there are (FoldedCards). */
export function McpServerView({ document, matched, target }: { document: Json; matched: ReadonlySet<string>; target: string | undefined }) {
  const server = obj(document.mcpServer) ?? {};
  const tools = arr(obj(document.toolspec)?.tools)
    .map(obj)
    .filter((t): t is Json => t !== undefined);
  return (
    <>
      <section aria-labelledby="server-h">
        <h2 id="server-h">Server</h2>
        <dl class="facts">
          <dt>Name</dt>
          <dd>{str(server.name) ?? '—'}</dd>
          {str(server.version) && (
            <>
              <dt>Version</dt>
              <dd>{str(server.version)}</dd>
            </>
          )}
          <dt>URL</dt>
          <dd>
            <ExternalLink url={server.url} />
          </dd>
        </dl>
      </section>
      <section aria-labelledby="tools-h">
        <h2 id="tools-h">Tools ({tools.length})</h2>
        <FoldedCards
          items={tools}
          noun="tools"
          anchors={cardAnchors('tool', tools.map((tool) => str(tool.name)))}
          render={(tool, anchor) => <Tool tool={tool} anchor={anchor} />}
          matched={matched}
          target={target}
        />
      </section>
    </>
  );
}

/** `anchor`: the card's id on the page (cardAnchors). */
function Tool({ tool, anchor }: { tool: Json; anchor: string }) {
  const annotations = obj(tool.annotations) ?? {};
  const readOnly = toolHints(annotations).readOnlyHint;
  const name = str(tool.name) ?? 'unnamed';
  const title = str(tool.title) ?? str(annotations.title);
  return (
    <li class="card" id={anchor}>
      <h3>
        <code>{name}</code> {title && (
          <span class="muted" dir="auto">
            {title}
          </span>
        )}
      </h3>
      {str(tool.description) && <p class="prose" dir="auto">{str(tool.description)!.trim()}</p>}
      <ul class="hints" aria-label="Hints">
        {HINTS.filter((h) => hintApplies(h.key, readOnly)).map((h) => {
          const declared = typeof annotations[h.key] === 'boolean';
          const fallback = TOOL_HINT_DEFAULTS[h.key];
          const value = declared ? annotations[h.key] === true : fallback;
          const risky = (h.key === 'destructiveHint' && value) || (h.key === 'readOnlyHint' && !value);
          const title = declared ? `${h.key}: ${value}` : `${h.key} not declared: the MCP default is ${fallback}`;
          return (
            <li class={`badge ${h.key === 'readOnlyHint' && value ? 'ok' : risky ? 'warn' : 'subtle'}`} title={readOnly && h.key === 'readOnlyHint' ? `${title}; so not destructive and idempotent` : title}>
              {value ? h.yes : h.no}
              {!declared && <span class="default-mark"> (default)</span>}
            </li>
          );
        })}
      </ul>
      <Parameters schema={obj(tool.inputSchema)} />
      <details>
        <summary>
          Input schema{obj(tool.outputSchema) ? ' and output schema' : ''}
          {/* Which tool's: every tool has this toggle, and a screen reader's list of them would be the same words. */}
          <span class="visually-hidden"> of {name}</span>
        </summary>
        {/* Focusable: a schema wider than the card scrolls sideways inside it, which only a focused
            element does by the keyboard (as the raw JSON's). */}
        <pre class="code small" tabIndex={0}>
          {pretty(tool.inputSchema)}
        </pre>
        {obj(tool.outputSchema) && (
          <pre class="code small" tabIndex={0}>
            {pretty(tool.outputSchema)}
          </pre>
        )}
      </details>
    </li>
  );
}

function Parameters({ schema }: { schema: Json | undefined }) {
  const properties = Object.entries(obj(schema?.properties) ?? {});
  if (properties.length === 0) return <p class="muted small">No parameters.</p>;
  const required = new Set(strings(schema?.required));
  return (
    <table class="params">
      <caption class="visually-hidden">Parameters</caption>
      <thead>
        <tr>
          <th scope="col">Parameter</th>
          <th scope="col">Type</th>
          <th scope="col">Description</th>
        </tr>
      </thead>
      <tbody>
        {properties.map(([key, value]) => {
          const p = obj(value) ?? {};
          const type = Array.isArray(p.type) ? strings(p.type).join(' | ') : (str(p.type) ?? (p.enum ? 'enum' : p.$ref ? 'ref' : 'any'));
          return (
            <tr>
              <th scope="row">
                <code>{key}</code>
                {required.has(key) && <span class="required"> required</span>}
              </th>
              <td>
                <code>{type}</code>
              </td>
              <td class="prose" dir="auto">{str(p.description)?.trim() ?? ''}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
