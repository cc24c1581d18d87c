/**
 * Checks on agent cards that JSON Schema cannot express or that must not block registration:
 * they all produce warnings. Schema errors are handled by the schemas and ./translate.ts.
 */
import type { Finding } from '../contract/types.js';
import { isObject, pointer, quote, type JsonObject } from '../lib/json.js';
import { mediaTypeWarnings } from './media-types.js';
import type { Generation } from './types.js';
import { urlWarnings } from './urls.js';

const CORE_BINDINGS = new Set(['JSONRPC', 'GRPC', 'HTTP+JSON']);
/** Subtrees whose strings are free text or extension-defined, not endpoints of the agent. */
const FREE_FORM_KEYS: ReadonlySet<string> = new Set(['examples', 'params', 'header']);

/** "jsonrpc", "JSON-RPC" -> "JSONRPC"; "rest", "http_json" -> "HTTP+JSON"; "grpc" -> "GRPC". */
function suggestBinding(binding: string): string | undefined {
  const key = binding.toUpperCase().replace(/[-_ .]/g, '');
  if (key === 'JSONRPC' || key === 'JSONRPC2' || key === 'JSONRPC20') return 'JSONRPC';
  if (key === 'GRPC') return 'GRPC';
  if (key === 'HTTP+JSON' || key === 'HTTPJSON' || key === 'REST' || key === 'HTTP') return 'HTTP+JSON';
  return undefined;
}

/** The v0.1/v0.2 `authentication` object: clients of v0.3 and v1.0 ignore it. */
export function legacyAuthenticationWarning(card: JsonObject, generation?: Generation): Finding | undefined {
  if (!isObject(card.authentication)) return undefined;
  return {
    path: '/authentication',
    rule: 'legacy-authentication',
    message: 'the "authentication" object is from A2A v0.1/v0.2 and is ignored by clients',
    hint:
      generation === '0.3'
        ? 'Declare schemes in "securitySchemes" and reference them from "security".'
        : 'Declare schemes in "securitySchemes" and reference them from "securityRequirements" (v1.0) or "security" (v0.3).',
  };
}

export function cardWarnings(card: JsonObject, generation: Generation, warnInsecureHttp: boolean): Finding[] {
  const out: Finding[] = [];
  // URLs anywhere in the card (interfaces, provider, docs, icon, OAuth endpoints), except
  // inside skill examples and extension params, which are free-form.
  out.push(...urlWarnings(card, '', warnInsecureHttp, FREE_FORM_KEYS));

  const skills = Array.isArray(card.skills) ? card.skills : [];
  const ids = new Map<string, number>();
  skills.forEach((skill, i) => {
    if (!isObject(skill)) return;
    if (typeof skill.id === 'string') {
      const first = ids.get(skill.id);
      if (first !== undefined) {
        out.push({
          path: pointer('/skills', i, 'id'),
          rule: 'duplicate-skill-id',
          message: `skill id ${quote(skill.id)} is already used by /skills/${first}`,
          hint: 'Give every skill a unique id; clients and search results refer to skills by id.',
        });
      } else {
        ids.set(skill.id, i);
      }
    }
    if (!Array.isArray(skill.examples) || skill.examples.length === 0) {
      out.push({
        path: pointer('/skills', i, 'examples'),
        rule: 'skill-without-examples',
        message: 'the skill has no examples',
        hint: 'Add "examples": a few prompts the skill handles; they help people and agents find and use it.',
      });
    }
  });

  out.push(...mediaTypeWarnings(card));

  const legacy = legacyAuthenticationWarning(card, generation);
  if (legacy) out.push(legacy);

  if (generation === '1.0') {
    const caps = card.capabilities;
    if (isObject(caps) && 'stateTransitionHistory' in caps) {
      out.push({
        path: '/capabilities/stateTransitionHistory',
        rule: 'removed-field',
        message: '"stateTransitionHistory" was removed in A2A v1.0 and is ignored',
        hint: 'Remove it.',
      });
    }
    if ('supportsExtendedAgentCard' in card) {
      out.push({
        path: '/supportsExtendedAgentCard',
        rule: 'misplaced-field',
        message: '"supportsExtendedAgentCard" is not an A2A v1.0 card field and is ignored',
        hint: 'Use "capabilities": {"extendedAgentCard": true}.',
      });
    }
    const interfaces = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : [];
    interfaces.forEach((iface, i) => {
      if (!isObject(iface)) return;
      pushBindingWarning(out, iface.protocolBinding, pointer('/supportedInterfaces', i, 'protocolBinding'));
      // A custom binding (a URI) may version itself (an MCP endpoint's "2025-11-25"): only the
      // core bindings, whose version is A2A's, are checked.
      const core = typeof iface.protocolBinding === 'string' && suggestBinding(iface.protocolBinding) !== undefined;
      const version = core ? interfaceVersionWarning(iface.protocolVersion, pointer('/supportedInterfaces', i, 'protocolVersion')) : undefined;
      if (version) out.push(version);
    });
  } else {
    // v0.3 names the same bindings "transport"; its clients match them exactly as v1.0 ones do
    // (@a2a-js/sdk 0.3: "No compatible transport found" for "jsonrpc").
    pushBindingWarning(out, card.preferredTransport, '/preferredTransport');
    const interfaces = Array.isArray(card.additionalInterfaces) ? card.additionalInterfaces : [];
    interfaces.forEach((iface, i) => {
      if (isObject(iface)) pushBindingWarning(out, iface.transport, pointer('/additionalInterfaces', i, 'transport'));
    });
  }
  return out;
}

/** An A2A version an interface can speak: "1.0", "0.3", or a patch of either. */
const KNOWN_INTERFACE_VERSION = /^(1\.0|0\.3)(\.(0|[1-9][0-9]*))?$/;

/**
 * An interface's protocolVersion that names no A2A version: clients choose how to talk to the
 * URL by it (@a2a-js/sdk prefers "1.0" and falls back to v0.3 for 0.3.x), and the registry's
 * protocolVersion filter matches on it, so "v1.0" or the agent's own "2.1.0" mislead both.
 */
function interfaceVersionWarning(version: unknown, path: string): Finding | undefined {
  if (typeof version !== 'string' || version === '' || KNOWN_INTERFACE_VERSION.test(version)) return undefined;
  const bare = version.trim().replace(/^v/i, '');
  const meant = KNOWN_INTERFACE_VERSION.test(bare) ? bare : bare === '1' ? '1.0' : undefined;
  return {
    path,
    rule: 'unknown-protocol-version',
    message: `${quote(version)} is not an A2A protocol version (1.0 or 0.3)`,
    hint:
      (meant ? `Did you mean ${quote(meant)}? ` : '') +
      'Give the A2A version spoken at this URL: "1.0", or "0.3" for a v0.3 endpoint; the agent\'s own version goes in "version".',
  };
}

/** A binding (v1.0 protocolBinding, v0.3 transport) that is no core name and no URI. */
function pushBindingWarning(out: Finding[], binding: unknown, path: string): void {
  if (typeof binding !== 'string' || binding === '') return;
  if (CORE_BINDINGS.has(binding) || /^[a-z][a-z0-9+.-]*:/i.test(binding)) return;
  const suggestion = suggestBinding(binding);
  out.push({
    path,
    rule: 'unknown-protocol-binding',
    message: `${quote(binding)} is neither a core binding (JSONRPC, GRPC, HTTP+JSON) nor a URI`,
    hint: suggestion
      ? `Did you mean ${quote(suggestion)}? Core binding names are exact and upper case.`
      : 'Custom bindings SHOULD be identified by a URI, e.g. "https://example.org/bindings/websocket/v1".',
  });
}
