/**
 * Advice for the mistakes real documents make (surveyed in test/fixtures/corpus): each function looks
 * at one translated schema error and, when it recognises a known mistake, adds a hint that
 * says exactly what to change. The hints name v1.0 or v0.3 shapes depending on the card.
 */
import { isObject, quote, type JsonObject } from '../lib/json.js';
import type { HintFn, Issue } from './translate.js';
import type { Generation } from './types.js';

const CORE_BINDINGS = '"JSONRPC", "GRPC" or "HTTP+JSON"';

/** v0.3 `type` of a security scheme -> the v1.0 member that replaces it. */
const V10_SCHEME_MEMBER: Record<string, string> = {
  apiKey: 'apiKeySecurityScheme',
  http: 'httpAuthSecurityScheme',
  oauth2: 'oauth2SecurityScheme',
  openIdConnect: 'openIdConnectSecurityScheme',
  mutualTLS: 'mtlsSecurityScheme',
};
const V03_SCHEME_TYPE: Record<string, string> = Object.fromEntries(Object.entries(V10_SCHEME_MEMBER).map(([k, v]) => [v, k]));

/** Why each v0.3 top-level field cannot stay in a v1.0 card, and what replaces it. */
export const MIXED_GENERATION_FIELDS: Record<string, string> = {
  protocolVersion: 'remove it: in v1.0 each supportedInterfaces entry carries its own "protocolVersion" (e.g. "1.0")',
  url: 'remove it: every endpoint is a supportedInterfaces entry {"url", "protocolBinding", "protocolVersion"}',
  preferredTransport: 'remove it: put the preferred interface first in supportedInterfaces; its "protocolBinding" names the transport',
  additionalInterfaces:
    'move each entry into supportedInterfaces, renaming "transport" to "protocolBinding" and adding "protocolVersion"',
  security:
    'rename it "securityRequirements" and write each entry as {"schemes": {"<scheme name>": {"list": ["<scope>", …]}}}',
  supportsAuthenticatedExtendedCard: 'remove it and set "capabilities": {"extendedAgentCard": true} instead',
};

/**
 * A v0.3 `security` value (`[{"google": ["openid", "email"]}]`, as the A2A v1.0.1 specification's
 * own sample card still writes it) as the v1.0 `securityRequirements` that replaces it, when it
 * has that shape and is short enough to quote in a hint.
 */
function securityRequirementsOf(security: unknown): string | undefined {
  if (!Array.isArray(security) || security.length === 0 || security.length > 8) return undefined;
  const requirements: { schemes: Record<string, { list: string[] }> }[] = [];
  for (const requirement of security) {
    if (!isObject(requirement)) return undefined;
    const schemes = Object.entries(requirement).map(([name, scopes]) =>
      Array.isArray(scopes) && scopes.every((s) => typeof s === 'string') ? ([name, { list: scopes as string[] }] as const) : undefined,
    );
    if (schemes.some((e) => e === undefined)) return undefined;
    // fromEntries defines each name as an own property ("__proto__" included), never a prototype.
    requirements.push({ schemes: Object.fromEntries(schemes as (readonly [string, { list: string[] }])[]) });
  }
  const text = JSON.stringify(requirements);
  return text.length <= 300 ? text : undefined;
}

const lastToken = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const slug = (s: string): string =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40) || 'skill-id';

function cardHint(issue: Issue, card: JsonObject, generation: Generation): ReturnType<HintFn> {
  const { keyword, path, definition, data, params } = issue;
  const missing = keyword === 'required' ? String(params.missingProperty) : undefined;
  const holder = isObject(data) ? data : undefined;

  // A v0.3 field in a v1.0 card (the v1.0 schema forbids them with `not: {}`).
  if (keyword === 'not' && definition === 'AgentCard') {
    const field = lastToken(path);
    const advice = MIXED_GENERATION_FIELDS[field];
    if (advice) {
      const rewritten = field === 'security' ? securityRequirementsOf(data) : undefined;
      return {
        rule: 'mixed-generation',
        message: `${quote(field)} is an A2A v0.3 field; a v1.0 card (one with "supportedInterfaces") must not have it`,
        hint: advice[0]!.toUpperCase() + advice.slice(1) + (rewritten ? `; here: "securityRequirements": ${rewritten}` : '') + '.',
      };
    }
  }

  if (path === '/capabilities' && keyword === 'type' && Array.isArray(data)) {
    return {
      hint:
        `capabilities is an object of optional flags (${generation === '1.0' ? '"streaming", "pushNotifications", "extendedAgentCard"' : '"streaming", "pushNotifications", "stateTransitionHistory"'}), ` +
        'e.g. {"streaming": true}. Describe what the agent can do as entries of "skills" instead.',
    };
  }

  if (/^\/skills\/\d+$/.test(path) && keyword === 'type' && typeof data === 'string') {
    return {
      hint: `Each skill is an object, not a string: {"id": ${quote(slug(data))}, "name": ${quote(data)}, "description": "…", "tags": ["…"]}.`,
    };
  }
  if (path === '/skills' && keyword === 'type') {
    return { hint: 'skills is an array of skill objects: [{"id", "name", "description", "tags": [...]}].' };
  }
  if (/^\/skills\/\d+\/examples\/\d+$/.test(path) && keyword === 'type' && typeof data !== 'string') {
    return {
      hint: 'examples are sample prompts written as plain strings, e.g. "Find vegan pasta recipes"; describe structured input and output in the skill description or documentation.',
    };
  }
  if (/^\/(defaultInputModes|defaultOutputModes|skills\/\d+\/(tags|examples|inputModes|outputModes))$/.test(path) && keyword === 'type' && typeof data === 'string') {
    return { hint: `Use an array of strings: [${quote(data)}].` };
  }
  if ((definition === 'AgentSkill' && missing === 'tags') || (/^\/skills\/\d+\/tags$/.test(path) && keyword === 'minItems')) {
    return { hint: 'Add "tags": ["<keyword>", …] with at least one keyword describing the skill; tags are searched and filtered on.' };
  }
  if (definition === 'AgentSkill' && (missing === 'id' || missing === 'name' || missing === 'description')) {
    return { hint: 'Every skill needs "id" (unique, machine-readable), "name", "description" and "tags".' };
  }

  if (definition === 'AgentInterface' && generation === '1.0' && missing === 'protocolBinding') {
    const legacy = holder && typeof holder.transport === 'string' ? 'transport' : holder && typeof holder.type === 'string' ? 'type' : undefined;
    if (legacy) {
      return {
        message: `required field "protocolBinding" is missing (the entry has ${quote(legacy)} instead)`,
        hint: `Rename ${quote(legacy)} to "protocolBinding"; use ${CORE_BINDINGS} (upper case) or a URI for a custom binding.`,
      };
    }
    return { hint: `Add "protocolBinding": ${CORE_BINDINGS}, or a URI for a custom binding.` };
  }
  if (definition === 'AgentInterface' && generation === '1.0' && missing === 'protocolVersion') {
    const top = card.protocolVersion;
    return {
      hint:
        'Add "protocolVersion": "1.0" (the A2A version spoken at this URL)' +
        (top !== undefined ? `; move the top-level "protocolVersion" (${quote(top)}) here` : '') +
        '.',
    };
  }
  if (definition === 'AgentInterface' && generation === '0.3' && missing === 'transport' && holder && 'protocolBinding' in holder) {
    return { hint: 'v0.3 calls it "transport" ("protocolBinding" is the v1.0 name).' };
  }

  if (definition === 'AgentCard' && missing) {
    switch (missing) {
      case 'capabilities':
        return { hint: 'Add "capabilities": {} or e.g. {"streaming": false, "pushNotifications": false}.' };
      case 'defaultInputModes':
      case 'defaultOutputModes':
        return { hint: `Add ${quote(missing)}: ["text/plain"] (the media types the agent ${missing === 'defaultInputModes' ? 'accepts' : 'produces'}).` };
      case 'skills':
        return { hint: 'Add "skills": [{"id", "name", "description", "tags": [...]}] with at least one skill.' };
      case 'url':
        return { hint: 'Add "url": the endpoint of the agent\'s preferred transport (v0.3).' };
      case 'version':
        return { hint: 'Add "version": the version of the agent itself, e.g. "1.0.0".' };
      default:
        return undefined;
    }
  }
  if (definition === 'AgentCard' && keyword === 'minItems' && /^\/(skills|supportedInterfaces|defaultInputModes|defaultOutputModes)$/.test(path)) {
    return { hint: 'A2A v1.0 marks this list REQUIRED, so it needs at least one element.' };
  }
  // Requirement entries in the other generation's form (a whole v0.3 entry in a v1.0 card is
  // reported by ./security-requirements.ts: the schema cannot see it).
  if (generation === '1.0' && keyword === 'type' && Array.isArray(data) && /^(\/skills\/\d+)?\/securityRequirements\/\d+\/schemes\/[^/]+$/.test(path)) {
    return { hint: `v1.0 wraps the scopes in an object: {"list": ${JSON.stringify(data).length > 80 ? '[…]' : JSON.stringify(data)}} (a bare array is the v0.3 form).` };
  }
  if (generation === '0.3' && keyword === 'type' && isObject(data) && /^(\/skills\/\d+)?\/security\/\d+\/schemes$/.test(path)) {
    const names = Object.keys(data);
    return {
      hint: `{"schemes": {…}} is the v1.0 form; a v0.3 requirement maps each scheme name to its scopes: {${(names.length > 0 ? names : ['<scheme name>']).map((n) => `${quote(n)}: []`).join(', ')}}.`,
    };
  }
  if (definition === 'AgentProvider' && missing === 'organization' && holder && typeof holder.name === 'string') {
    return { hint: 'Rename "name" to "organization".' };
  }

  // Security schemes.
  if (keyword === 'oneOf' && definition === 'SecurityScheme' && holder) {
    const type = typeof holder.type === 'string' ? holder.type : undefined;
    const member = type && Object.hasOwn(V10_SCHEME_MEMBER, type) ? V10_SCHEME_MEMBER[type] : undefined;
    if (member) {
      return {
        hint: `v1.0 wraps each scheme in a member named after its kind and has no "type": write {${quote(member)}: {…the other fields…}} instead of {"type": ${quote(type)}, …}.`,
      };
    }
    return { hint: `Use one of ${Object.values(V10_SCHEME_MEMBER).map((m) => quote(m)).join(', ')}, e.g. {"httpAuthSecurityScheme": {"scheme": "Bearer"}}.` };
  }
  if (keyword === 'oneOf' && definition === 'OAuthFlows' && Array.isArray(params.passingSchemas)) {
    return { hint: 'Declare one flow per security scheme: split them into several entries of "securitySchemes".' };
  }
  if (definition === 'APIKeySecurityScheme' && missing === 'location' && holder && 'in' in holder) {
    return { hint: 'v1.0 renamed "in" to "location".' };
  }
  if (definition === 'SecurityScheme' && generation === '0.3' && holder && (missing === 'type' || keyword === 'enum')) {
    const v10 = Object.keys(holder).find((k) => Object.hasOwn(V03_SCHEME_TYPE, k));
    if (v10) {
      return { hint: `${quote(v10)} is the v1.0 form; in a v0.3 card write {"type": ${quote(V03_SCHEME_TYPE[v10])}, …the fields…}.` };
    }
    return { hint: 'v0.3 security schemes have "type": "apiKey", "http", "oauth2", "openIdConnect" or "mutualTLS".' };
  }
  return undefined;
}

export function cardHints(card: JsonObject, generation: Generation): HintFn {
  return (issue) => cardHint(issue, card, generation);
}

const INPUT_SCHEMA_HINT =
  'Tool arguments are always a JSON object: set "type": "object" at the root of inputSchema and describe the arguments under "properties".';

/** Hints for the toolspec (paths relative to the toolspec). */
export function toolspecHints(toolspec: unknown): HintFn {
  return (issue) => {
    const { keyword, path, data, params } = issue;
    const missing = keyword === 'required' ? String(params.missingProperty) : undefined;
    if (path === '' && keyword === 'type' && Array.isArray(toolspec)) {
      return { hint: 'Wrap the list: {"tools": [ … ]}, as tools/list returns it.' };
    }
    if (path === '/tools' && missing === 'tools' && isObject(toolspec) && isObject(toolspec.result) && 'tools' in toolspec.result) {
      return { hint: 'Send the "result" of the tools/list response, i.e. {"tools": [ … ]}, not the whole JSON-RPC envelope.' };
    }
    if (path === '/tools' && keyword === 'minItems') return { hint: 'List at least one tool.' };
    if (/^\/tools\/\d+\/inputSchema(\/type)?$/.test(path) && (keyword === 'const' || keyword === 'type' || missing === 'type')) return { hint: INPUT_SCHEMA_HINT };
    if (/^\/tools\/\d+\/inputSchema$/.test(path) && missing === 'inputSchema' && isObject(data)) {
      const alt = ['input_schema', 'parameters', 'schema', 'inputschema'].find((k) => k in data);
      return { hint: alt ? `Rename ${quote(alt)} to "inputSchema".` : 'Add "inputSchema": {"type": "object", "properties": {…}}.' };
    }
    return undefined;
  };
}

/** Hints for the MCP server metadata (paths relative to it). */
export const serverMetaHints: HintFn = (issue) => {
  if (issue.path === '/url' && (issue.keyword === 'pattern' || issue.keyword === 'format')) {
    return {
      message: `must be an absolute http(s) URL; found ${quote(issue.data)}`,
      hint: 'Use the public URL of the MCP endpoint, e.g. "https://mcp.acme.dev/mcp".',
    };
  }
  if (issue.path === '/url' && issue.keyword === 'required') return { hint: 'Add "url": the public http(s) URL of the MCP endpoint.' };
  return undefined;
};
