/**
 * One normalised description of a registered document, whatever its generation: what storage
 * keys on, what search indexes and what answers show. v0.3 and v1.0 cards differ in where the
 * endpoint lives (`url` + `additionalInterfaces` vs `supportedInterfaces`); MCP servers have no
 * card at all. Everything downstream reads this shape instead of the raw documents.
 *
 * Input is assumed valid (it has passed validation), but the functions stay defensive because
 * stored documents outlive schema changes.
 */
import type { EntryDescription, SkillDescription, ToolDescription } from '../contract/description.js';
import type { EntryInterface } from '../contract/types.js';
import type { McpServerDocument } from '../contract/types.js';
import { isObject } from '../lib/json.js';
import { toolHints } from './tool-hints.js';

type Json = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const optStrings = (v: unknown): string[] | undefined => (Array.isArray(v) ? strings(v) : undefined);

function describeSkills(v: unknown): SkillDescription[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isObject).map((s) => ({
    id: str(s.id),
    name: str(s.name),
    description: str(s.description),
    tags: strings(s.tags),
    examples: strings(s.examples),
    inputModes: optStrings(s.inputModes),
    outputModes: optStrings(s.outputModes),
  }));
}

function interfacesOf(card: Json, generation: '0.3' | '1.0'): EntryInterface[] {
  if (generation === '1.0') {
    const list = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces.filter(isObject) : [];
    return list.map((i) => {
      const out: EntryInterface = { url: str(i.url), protocolBinding: str(i.protocolBinding) };
      if (typeof i.protocolVersion === 'string') out.protocolVersion = i.protocolVersion;
      if (typeof i.tenant === 'string' && i.tenant) out.tenant = i.tenant;
      return out;
    });
  }
  // v0.3: the main url speaks preferredTransport (JSONRPC by default); additionalInterfaces add more.
  const version = str(card.protocolVersion) || '0.3';
  const primary: EntryInterface = {
    url: str(card.url),
    protocolBinding: str(card.preferredTransport) || 'JSONRPC',
    protocolVersion: version,
  };
  const extra = Array.isArray(card.additionalInterfaces) ? card.additionalInterfaces.filter(isObject) : [];
  const rest = extra
    .map((i) => ({ url: str(i.url), protocolBinding: str(i.transport), protocolVersion: version }))
    .filter((i) => !(i.url === primary.url && i.protocolBinding === primary.protocolBinding));
  return [primary, ...rest];
}

/** Describe an A2A agent card of the given generation (as detected by validation). */
export function describeAgentCard(card: unknown, generation: '0.3' | '1.0'): EntryDescription {
  const c = isObject(card) ? card : {};
  const interfaces = interfacesOf(c, generation);
  const capabilities = isObject(c.capabilities) ? c.capabilities : {};
  const provider = isObject(c.provider) ? str(c.provider.organization) || undefined : undefined;
  return {
    kind: 'agent',
    name: str(c.name),
    description: str(c.description),
    provider,
    protocolVersion: generation,
    interfaces,
    identityUrl: interfaces[0]?.url ?? '',
    streaming: capabilities.streaming === true,
    defaultInputModes: strings(c.defaultInputModes),
    defaultOutputModes: strings(c.defaultOutputModes),
    skills: describeSkills(c.skills),
    tools: [],
  };
}

function describeTools(v: unknown): ToolDescription[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isObject).map((t) => {
    const a = isObject(t.annotations) ? t.annotations : {};
    return {
      name: str(t.name),
      title: typeof t.title === 'string' ? t.title : undefined,
      description: str(t.description),
      annotationTitle: typeof a.title === 'string' ? a.title : undefined,
      // The MCP defaults where a hint is absent; a read-only tool not destructive and idempotent.
      hints: toolHints(a),
    };
  });
}

/** Describe an MCP server entry: its metadata plus its toolspec. */
export function describeMcpServer(doc: McpServerDocument): EntryDescription {
  const server = isObject(doc.mcpServer) ? doc.mcpServer : ({} as Json);
  const url = str(server.url);
  return {
    kind: 'mcp-server',
    name: str(server.name),
    description: str(server.description),
    interfaces: [{ url, protocolBinding: 'MCP' }],
    identityUrl: url,
    streaming: false,
    defaultInputModes: [],
    defaultOutputModes: [],
    skills: [],
    tools: describeTools(isObject(doc.toolspec) ? doc.toolspec.tools : undefined),
  };
}
