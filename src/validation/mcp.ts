/**
 * MCP server validation: the toolspec's size, the server metadata, the toolspec against the
 * MCP Tool schema, each tool's input/output schema as a JSON Schema, then warnings.
 * Paths are relative to the stored document {mcpServer, toolspec}.
 */
import type { Finding } from '../contract/types.js';
import type { CompiledPair } from './ajv-instances.js';
import { serverMetaHints, toolspecHints } from './hints.js';
import { isObject, pointer, quote } from '../lib/json.js';
import { compactJsonBytes } from './size.js';
import { translateAjvErrors } from './translate.js';
import type { ValidatorOptions, Verdict, WrittenText } from './types.js';
import { checkUserSchema } from './user-schema.js';
import { checkEndpointUrl, mcpEndpointUrls, withCheckedEndpoints, type CheckedEndpoint } from './endpoint-urls.js';
import { classifyUrl, urlFinding } from './urls.js';
import { accepted, failureMessage, rejected, tooLarge } from './verdict.js';
import { MCP_SERVER_TEXT, displayTextFindings } from './display-text.js';
import { fidelityFindings, partsOf } from './json-fidelity.js';
import { nulCharacterErrors } from './nul-characters.js';

export interface McpValidators {
  toolspec: CompiledPair;
  serverMeta: CompiledPair;
}

/** Endpoint URL findings that say more than the schema's "must be an absolute http(s) URL". */
const PRECISE_URL_RULES: ReadonlySet<string> = new Set(['url-control-character', 'url-placeholder', 'url-mixed-script', 'url-lookalike-host']);

/** MCP 2025-11-25 naming guidance: 1-128 characters of [A-Za-z0-9_.-] (a SHOULD, so a warning). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

function check(pair: CompiledPair, value: unknown, base: string, hint: Parameters<typeof translateAjvErrors>[2]): Finding[] {
  if (pair.fast(value)) return [];
  pair.explain(value);
  return translateAjvErrors(pair.explain.errors ?? [], base, hint);
}

function toolWarnings(tools: unknown[]): Finding[] {
  const out: Finding[] = [];
  const names = new Map<string, number>();
  tools.forEach((tool, i) => {
    if (!isObject(tool)) return;
    const name = tool.name;
    if (typeof name === 'string' && name !== '') {
      if (!TOOL_NAME.test(name)) {
        out.push({
          path: pointer('/toolspec/tools', i, 'name'),
          rule: 'tool-name-format',
          message: `tool name ${quote(name)} is not 1-128 characters of A-Z, a-z, 0-9, "_", "-" and "."`,
          hint: 'Rename the tool, e.g. with "_" instead of spaces; clients may refuse other names.',
        });
      }
      const first = names.get(name);
      if (first !== undefined) {
        out.push({
          path: pointer('/toolspec/tools', i, 'name'),
          rule: 'duplicate-tool-name',
          message: `tool name ${quote(name)} is already used by /toolspec/tools/${first}`,
          hint: 'Tool names must be unique within a server.',
        });
      } else {
        names.set(name, i);
      }
    }
    if (typeof tool.description !== 'string' || tool.description.trim() === '') {
      out.push({
        path: pointer('/toolspec/tools', i, 'description'),
        rule: 'tool-without-description',
        message: 'the tool has no description',
        hint: 'Describe what the tool does; search and language models rely on it.',
      });
    }
  });
  return out;
}

export function validateMcpServer(
  v: McpValidators,
  options: ValidatorOptions,
  server: unknown,
  toolspec: unknown,
  toolspecSizeBytes: number,
  /** false: check the toolspec alone (validating a bare toolspec.json); its metadata comes later. */
  serverRequired = true,
  written?: WrittenText,
): Verdict {
  if (toolspecSizeBytes > options.maxDocumentBytes) {
    return tooLarge('mcp-server', 'toolspec', toolspecSizeBytes, options.maxDocumentBytes, isObject(toolspec) ? compactJsonBytes(toolspec) : undefined);
  }
  // As for a card (./card.ts): a number JSON cannot hold, or a key given twice, is said alone.
  const fidelity = fidelityFindings(
    partsOf(
      [
        { value: server, at: '/mcpServer' },
        { value: toolspec, at: '/toolspec' },
      ],
      written,
    ),
  );
  if (fidelity.errors.length > 0) {
    return rejected('mcp-server', 'VALIDATION_FAILED', failureMessage('MCP server registration', fidelity.errors), toolspecSizeBytes, fidelity.errors, fidelity.warnings);
  }
  const errors: Finding[] = [];
  const warnings: Finding[] = [...fidelity.warnings];
  const checked: CheckedEndpoint[] = [];

  if (server === undefined) {
    if (serverRequired) errors.push({ path: '/mcpServer', rule: 'required', message: 'the MCP server metadata is missing', hint: 'Send "mcpServer": {"name": "…", "url": "https://…/mcp"} beside the toolspec.' });
  } else {
    const metaErrors = check(v.serverMeta, server, '/mcpServer', serverMetaHints);
    const [endpoint] = mcpEndpointUrls(server);
    // The URL is the server's identity: it must parse (the schema's uri format accepts a few
    // strings no URL parser does, such as http://@@:x), be http(s), carry no credentials.
    const urlCheck = endpoint && checkEndpointUrl(endpoint);
    // A control character, an unfilled template or look-alike letters are what is wrong, not the
    // schema's "must be an absolute http(s) URL" of a URL that reads like one: that is said
    // instead, with its position, the placeholder to fill in or the host's real name.
    const exact = urlCheck !== undefined && urlCheck.ok === false && PRECISE_URL_RULES.has(urlCheck.finding.rule ?? '');
    errors.push(...(exact ? metaErrors.filter((e) => e.path !== endpoint!.path) : metaErrors));
    if (endpoint && urlCheck) {
      if (urlCheck.ok === false) {
        if (exact || !metaErrors.some((e) => e.path === endpoint.path)) errors.push(urlCheck.finding);
      } else {
        checked.push({ ...endpoint, normalized: urlCheck.normalized });
        const issue = classifyUrl(endpoint.url, options.warnInsecureHttp === true);
        if (issue) warnings.push(urlFinding(endpoint.path, endpoint.url, issue));
      }
    }
  }

  errors.push(...check(v.toolspec, toolspec, '/toolspec', toolspecHints(toolspec)));
  const tools = isObject(toolspec) && Array.isArray(toolspec.tools) ? toolspec.tools : [];
  tools.forEach((tool, i) => {
    if (!isObject(tool)) return;
    for (const key of ['inputSchema', 'outputSchema'] as const) {
      errors.push(...checkUserSchema(tool[key], pointer('/toolspec/tools', i, key)));
    }
  });
  warnings.push(...toolWarnings(tools));
  // A text the schema already faulted (an empty name) is not reported twice.
  const text = displayTextFindings({ mcpServer: server, toolspec }, MCP_SERVER_TEXT);
  errors.push(...text.errors.filter((f) => !errors.some((e) => e.path === f.path)));
  warnings.push(...text.warnings);
  // U+0000 anywhere else (a parameter's default, a key): said once where a check above said it.
  errors.push(...nulCharacterErrors({ mcpServer: server, toolspec }).filter((f) => !errors.some((e) => e.path === f.path)));

  if (errors.length === 0) return withCheckedEndpoints(accepted('mcp-server', toolspecSizeBytes, warnings), checked);
  return rejected('mcp-server', 'VALIDATION_FAILED', failureMessage('MCP server registration', errors), toolspecSizeBytes, errors, warnings);
}
