/**
 * What a card signature signs: the card canonicalised (A2A §8.4.1), the same bytes for the
 * signer (CLI `sign`, the registry's own card) and every verifier.
 *
 * - A2A v1.0 cards: field presence as A2A §8.4.1 says (`presenceForm`: the SDK's ProtoJSON round
 *   trip, which drops fields outside the v1.0 card and default values but keeps `optional` fields
 *   and messages that are set, with every REQUIRED member present), then JCS, RFC 8785. Fields it
 *   drops are not covered by a signature: `uncoveredPaths` names them. The SDK's
 *   `canonicalizeAgentCard`, and this registry before, also remove every empty value (`""`,
 *   `[]`, `{}`, `null`), `"capabilities": {}` and an extension's empty params included: their
 *   signatures verify too (`emptylessPayload`, `requirementlessPayloads`), with a warning naming
 *   each empty value they leave uncovered (`uncoveredEmptyPaths`).
 * - A2A v0.3 cards: v0.3 defines no canonical form, and the SDK's would drop its very endpoint
 *   (`url` is not a v1.0 field). They are canonicalised as they are: the card without
 *   `signatures`, empty values (`""`, `null`, `[]`, `{}`) removed, JCS. Every field is covered.
 *
 * Security requirements keep their empty parts (`requirementsKept`): a scheme required without
 * scopes (v1.0 `{"schemes": {"apiKey": {}}}`, v0.3 `{"apiKey": []}`) is a map entry, not a
 * default value (A2A §8.4.1 leaves out defaults only), and an empty requirement (`{}`, "or no
 * credentials") is an item of the list. Removed as empty values, as the SDK and a2a-python do,
 * they were covered by no signature: anyone could add or remove "this agent needs a bearer
 * token" on a signed card. `requirementlessPayloads` is that older form: what the SDKs sign and
 * their verifiers accept, so the verifier accepts it too, with a warning naming each requirement
 * it leaves uncovered (`uncoveredRequirementPaths`).
 *
 * `sdkTypedPayload` is what @a2a-js/sdk 1.3's signer signs when given the SDK's TypeScript card
 * (`AgentCard.fromJSON(wire)`), its documented use: the round trip through the TypeScript type
 * loses every security scheme, so such a signature does not protect `securitySchemes`. The
 * verifier uses it only to say so.
 */
import { AgentCard, canonicalizeAgentCard } from '@a2a-js/sdk';
import { isObject, pointer, resolvePointer, type JsonObject } from '../lib/json.js';
import type { Generation } from './types.js';

/** RFC 8785 serialisation of a JSON value (JS number and string formatting are JCS's). */
export function jcs(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jcs).join(',')}]`;
  const record = value as JsonObject;
  // Sorting by UTF-16 code units, as Array.prototype.sort does, is what RFC 8785 asks.
  return `{${Object.keys(record)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${jcs(record[k])}`)
    .join(',')}}`;
}

/**
 * The value without empty strings, nulls, and arrays or objects left empty (undefined if nothing
 * remains); with `falsy`, without `false` and `0` too (as Python's truthiness drops them).
 */
function withoutEmpty(value: unknown, falsy = false): unknown {
  if (value === '' || value === null || value === undefined) return undefined;
  if (falsy && (value === false || value === 0)) return undefined;
  if (Array.isArray(value)) {
    const items = value.map((v) => withoutEmpty(v, falsy)).filter((v) => v !== undefined);
    return items.length > 0 ? items : undefined;
  }
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const kept = withoutEmpty(v, falsy);
      if (kept !== undefined) out[k] = kept;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return value;
}

function withoutSignatures(card: JsonObject): JsonObject {
  const { signatures: _signatures, ...rest } = card;
  return rest;
}

/** Where a card of each generation lists security requirements (at the top and in each skill). */
const REQUIREMENTS: Readonly<Record<Generation, string>> = { '1.0': 'securityRequirements', '0.3': 'security' };

/**
 * A list of security requirements with its empty parts kept: each requirement (an empty one is
 * "or no credentials"), each scheme it names (without scopes: `{}` in v1.0, `[]` in v0.3).
 * Undefined for an absent or empty list, which is a default value.
 */
function requirementsKept(requirements: unknown, generation: Generation, falsy: boolean): unknown {
  if (!Array.isArray(requirements)) return withoutEmpty(requirements, falsy);
  if (requirements.length === 0) return undefined;
  return requirements.map((requirement) => {
    const schemes = generation === '1.0' ? (isObject(requirement) ? requirement.schemes : undefined) : requirement;
    if (!isObject(schemes)) return withoutEmpty(requirement, falsy) ?? {};
    const kept = Object.fromEntries(Object.entries(schemes).map(([name, scopes]) => [name, withoutEmpty(scopes, falsy) ?? (generation === '1.0' ? {} : [])]));
    if (generation === '0.3') return kept;
    return Object.keys(kept).length > 0 ? { ...(withoutEmpty(requirement, falsy) as JsonObject | undefined), schemes: kept } : {};
  });
}

/** `withoutEmpty` of a card (or a skill) whose security requirements keep their empty parts. */
function cleaned(value: JsonObject, generation: Generation, falsy: boolean, depth = 0): JsonObject | undefined {
  const field = REQUIREMENTS[generation];
  const { [field]: requirements, ...rest } = value;
  let skills: unknown[] | undefined;
  if (depth === 0 && Array.isArray(rest.skills)) {
    skills = rest.skills.map((skill) => (isObject(skill) ? cleaned(skill, generation, falsy, 1) : withoutEmpty(skill, falsy))).filter((s) => s !== undefined);
    delete rest.skills;
  }
  const out = (withoutEmpty(rest, falsy) ?? {}) as JsonObject;
  const kept = requirementsKept(requirements, generation, falsy);
  if (kept !== undefined) out[field] = kept;
  if (skills !== undefined && skills.length > 0) out.skills = skills;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The card through the SDK's ProtoJSON round trip (fields outside the v1.0 card and default values dropped), without `signatures`. */
function protoNormalized(card: JsonObject): JsonObject {
  return withoutSignatures(AgentCard.toJSON(AgentCard.fromJSON(card)) as JsonObject);
}

/**
 * The members A2A v1.0 marks REQUIRED (`field_behavior`), with their default values, in each
 * message of the card that has some: A2A §8.4.1 keeps them even when they hold that default
 * (`"capabilities": {}`, an OAuth flow's `"scopes": {}`), where the ProtoJSON mapping, which
 * knows no field_behavior, leaves them out.
 */
type RequiredMembers = Readonly<Record<string, unknown>>;
const CARD_REQUIRED: RequiredMembers = { name: '', description: '', supportedInterfaces: [], version: '', capabilities: {}, defaultInputModes: [], defaultOutputModes: [], skills: [] };
const INTERFACE_REQUIRED: RequiredMembers = { url: '', protocolBinding: '', protocolVersion: '' };
const PROVIDER_REQUIRED: RequiredMembers = { url: '', organization: '' };
const SKILL_REQUIRED: RequiredMembers = { id: '', name: '', description: '', tags: [] };
/** Each security scheme type's (a oneof member of SecurityScheme), by its JSON name. */
const SCHEME_REQUIRED: Readonly<Record<string, RequiredMembers>> = {
  apiKeySecurityScheme: { location: '', name: '' },
  httpAuthSecurityScheme: { scheme: '' },
  oauth2SecurityScheme: { flows: {} },
  openIdConnectSecurityScheme: { openIdConnectUrl: '' },
};
/** Each OAuth flow's (a oneof member of OAuthFlows), by its JSON name; the deprecated implicit and password flows have none. */
const FLOW_REQUIRED: Readonly<Record<string, RequiredMembers>> = {
  authorizationCode: { authorizationUrl: '', tokenUrl: '', scopes: {} },
  clientCredentials: { tokenUrl: '', scopes: {} },
  deviceCode: { deviceAuthorizationUrl: '', tokenUrl: '', scopes: {} },
};

/** `message` (when it is one) with each of its REQUIRED members that it lacks, at its default value. */
function withRequired(message: unknown, required: RequiredMembers): void {
  if (!isObject(message)) return;
  for (const [member, value] of Object.entries(required)) if (!Object.hasOwn(message, member)) message[member] = structuredClone(value);
}

/**
 * The card in ProtoJSON (proto3's JSON mapping, as the SDK's round trip writes it) with its
 * REQUIRED members always present: what A2A §8.4.1 canonicalises. ProtoJSON already honours
 * field presence: it leaves out scalars, lists and maps at their default (an extension's
 * `"required": false`, an interface's `"tenant": ""`), keeps `optional` fields set to one
 * (`"streaming": false`, `"documentationUrl": ""`) and messages that are set, even empty
 * (`"mtlsSecurityScheme": {}`, a requirement's `{"schemes": {"key": {}}}`), and writes an
 * extension's `params` (a google.protobuf.Struct) as given, its `""`, `null`, `[]` and `{}`
 * included.
 */
function presenceForm(card: JsonObject): JsonObject {
  const out = protoNormalized(card);
  withRequired(out, CARD_REQUIRED);
  withRequired(out.provider, PROVIDER_REQUIRED);
  for (const face of out.supportedInterfaces as unknown[]) withRequired(face, INTERFACE_REQUIRED);
  for (const skill of out.skills as unknown[]) withRequired(skill, SKILL_REQUIRED);
  for (const scheme of isObject(out.securitySchemes) ? Object.values(out.securitySchemes) : []) {
    if (!isObject(scheme)) continue;
    for (const [type, required] of Object.entries(SCHEME_REQUIRED)) withRequired(scheme[type], required);
    const flows = isObject(scheme.oauth2SecurityScheme) ? scheme.oauth2SecurityScheme.flows : undefined;
    if (isObject(flows)) for (const [flow, required] of Object.entries(FLOW_REQUIRED)) withRequired(flows[flow], required);
  }
  return out;
}

/**
 * The signing payload of a card of the given generation: for v1.0, A2A §8.4.1's (field presence
 * as in proto3, REQUIRED members always present, RFC 8785), which every signer that follows the
 * specification computes.
 */
export function canonicalCardPayload(card: JsonObject, generation: Generation): string {
  if (generation === '1.0') return jcs(presenceForm(card));
  return jcs(cleaned(withoutSignatures(card), '0.3', false) ?? {});
}

/**
 * The payload this registry signed for a v1.0 card before it followed §8.4.1's field presence,
 * when that differs: the ProtoJSON form with every empty value removed (`""`, `null`, `[]`, `{}`,
 * as @a2a-js/sdk's `canonicalizeAgentCard` removes them) but for the empty parts of security
 * requirements. Signatures over it (earlier builds, `a2a-registry sign` before) still verify.
 */
export function emptylessPayload(card: JsonObject, generation: Generation): string | undefined {
  if (generation !== '1.0') return undefined;
  const payload = jcs(cleaned(protoNormalized(card), '1.0', false) ?? {});
  return payload === canonicalCardPayload(card, generation) ? undefined : payload;
}

/**
 * JSON Pointers of the members of a v1.0 card that A2A §8.4.1's form keeps and the older form
 * (`emptylessPayload`: every empty value left out, as @a2a-js/sdk 1.3 and earlier builds of this
 * registry sign) does not: `""`, `null`, `[]` and `{}` (an extension's empty param, a security
 * scheme without members, an OAuth flow's empty scopes). A signature over that form does not cover
 * them: each could be removed, or added, without breaking it. A list that lost empty items is
 * named whole (the positions of its other items are not covered either); REQUIRED members the card
 * leaves out are not named (left out or empty, they mean the same).
 */
export function uncoveredEmptyPaths(card: JsonObject): string[] {
  const given = withoutSignatures(card);
  const out: string[] = [];
  const uncovered = (path: string) => {
    if (out.length < MAX_UNCOVERED && resolvePointer(given, path) !== undefined) out.push(path);
  };
  const walk = (kept: unknown, older: unknown, path: string): void => {
    if (Array.isArray(kept)) {
      if (!Array.isArray(older) || older.length !== kept.length) uncovered(path);
      else kept.forEach((item, i) => walk(item, older[i], pointer(path, i)));
    } else if (isObject(kept)) {
      for (const [key, value] of Object.entries(kept)) {
        if (isObject(older) && Object.hasOwn(older, key)) walk(value, older[key], pointer(path, key));
        else uncovered(pointer(path, key));
      }
    }
  };
  walk(presenceForm(card), cleaned(protoNormalized(card), '1.0', false) ?? {}, '');
  return out;
}

/**
 * What @a2a-js/sdk 1.3 (`canonicalizeAgentCard`) signs for a card, when that differs from
 * `canonicalCardPayload`: every empty value removed, those of security requirements and REQUIRED
 * members too. For v0.3 the same removal, when the card's requirements have empty parts.
 */
export function sdkPayload(card: JsonObject, generation: Generation): string | undefined {
  const payload = generation === '1.0' ? canonicalizeAgentCard(card as unknown as AgentCard) : requirementlessPayloads(card, generation)[0];
  return payload === undefined || payload === canonicalCardPayload(card, generation) ? undefined : payload;
}

/** Whether a security requirement has an empty part (it is empty, or names a scheme without scopes). */
function hasEmptyPart(requirement: unknown, generation: Generation): boolean {
  const schemes = generation === '1.0' ? (isObject(requirement) ? requirement.schemes : undefined) : requirement;
  return !isObject(schemes) || Object.keys(schemes).length === 0 || Object.values(schemes).some((scopes) => withoutEmpty(scopes) === undefined);
}

/**
 * The JSON pointers of the security requirements (at the top and in each skill) with an empty
 * part: what a signature over `requirementlessPayloads` does not cover.
 */
export function uncoveredRequirementPaths(card: JsonObject, generation: Generation): string[] {
  const field = REQUIREMENTS[generation];
  const paths: string[] = [];
  const collect = (holder: unknown, at: string) => {
    const requirements = isObject(holder) ? holder[field] : undefined;
    if (!Array.isArray(requirements)) return;
    requirements.forEach((requirement, i) => {
      if (hasEmptyPart(requirement, generation)) paths.push(`${at}/${field}/${i}`);
    });
  };
  collect(card, '');
  if (Array.isArray(card.skills)) card.skills.forEach((skill, i) => collect(skill, `/skills/${i}`));
  return paths;
}

/**
 * What this registry (before it kept them), @a2a-js/sdk's `canonicalizeAgentCard` and a2a-python
 * sign for a card whose security requirements have empty parts: the payloads with those parts
 * removed as empty values. Empty when the card has none (then the forms are the same). A
 * signature over one of them does not cover those requirements; the verifier warns so.
 */
export function requirementlessPayloads(card: JsonObject, generation: Generation): string[] {
  if (uncoveredRequirementPaths(card, generation).length === 0) return [];
  if (generation === '1.0') return [canonicalizeAgentCard(card as unknown as AgentCard)];
  return [jcs(withoutEmpty(withoutSignatures(card)) ?? {}), ...a2aPython03Payloads(card, true)];
}

/**
 * Members a2a-python 0.3 (`a2a.utils.helpers.canonicalize_agent_card`, the v0.3 signer in use)
 * leaves out of its payload because they hold its models' default values (pydantic
 * `model_dump(exclude_defaults=True)`): the card's `protocolVersion` "0.3.0" and
 * `preferredTransport` "JSONRPC", and each security scheme's `type`, which names its model.
 */
const A2A_PYTHON_03_DEFAULTS: Readonly<Record<string, string>> = { protocolVersion: '0.3.0', preferredTransport: 'JSONRPC' };
/**
 * The members of each v0.3 security scheme type besides `type` (the v0.3 JSON Schema). Required
 * members differ from type to type, so members that all belong to one type name that type; a
 * scheme with members of another type does not (`{"type": "mutualTLS", "scheme": "bearer"}` is a
 * valid card whose members read as an http scheme).
 */
const SECURITY_SCHEME_MEMBERS: Readonly<Record<string, ReadonlySet<string>>> = {
  apiKey: new Set(['name', 'in', 'description']),
  http: new Set(['scheme', 'bearerFormat', 'description']),
  oauth2: new Set(['flows', 'oauth2MetadataUrl', 'description']),
  openIdConnect: new Set(['openIdConnectUrl', 'description']),
  mutualTLS: new Set(['description']),
};

/**
 * What a2a-python 0.3 signs for a v0.3 card, where that differs from `canonicalCardPayload`:
 * the card without the members it holds as defaults (above), empty values removed, keys sorted
 * (0.3.24 and later); 0.3.21 to 0.3.23 also removed `false` and `0`. A default left out means
 * what it means written, and so does a `false` of the schema's booleans; every other member
 * is covered as in our form. A scheme's `type` is left out only where its other members name it
 * (SECURITY_SCHEME_MEMBERS). Where a `false` or a `0` left out does not mean the same
 * (`uncoveredFalsyPaths`), the verifier warns. `only: 'falsy'`: just 0.3.21-0.3.23's form, when
 * it is one of its own.
 */
export function a2aPython03Payloads(card: JsonObject, requirementless = false, only?: 'falsy'): string[] {
  const rest: JsonObject = { ...withoutSignatures(card) };
  for (const [member, value] of Object.entries(A2A_PYTHON_03_DEFAULTS)) if (rest[member] === value) delete rest[member];
  if (isObject(rest.securitySchemes)) {
    rest.securitySchemes = Object.fromEntries(
      Object.entries(rest.securitySchemes).map(([name, scheme]) => {
        if (!isObject(scheme) || typeof scheme.type !== 'string' || !Object.hasOwn(SECURITY_SCHEME_MEMBERS, scheme.type)) return [name, scheme];
        const { type, ...fields } = scheme;
        // A payload without the type covers it only where the other members tell it: otherwise
        // the type could be changed (http to mutualTLS) without breaking the signature.
        const members = SECURITY_SCHEME_MEMBERS[type]!;
        return [name, Object.keys(fields).every((member) => members.has(member)) ? fields : scheme];
      }),
    );
  }
  const ours = canonicalCardPayload(card, '0.3');
  // a2a-python removes the empty parts of security requirements too: only `requirementless`
  // payloads (for the verifier's reason) are made that way; the accepted ones keep them.
  const form = (falsy: boolean) => jcs((requirementless ? withoutEmpty(rest, falsy) : cleaned(rest, '0.3', falsy)) ?? {});
  const [plain, falsy] = [form(false), form(true)];
  // Which form is 0.3.21-0.3.23's only (it differs when the card holds a `false` or a `0`).
  if (only === 'falsy') return falsy === plain || falsy === ours ? [] : [falsy];
  return [...new Set([plain, falsy])].filter((payload) => payload !== ours);
}

/**
 * The v0.3 members whose absence means `false` (the v0.3 JSON Schema's booleans): dropping a
 * `false` there, as a2a-python 0.3.21 to 0.3.23 did, changes nothing.
 */
const ABSENT_MEANS_FALSE = [/^\/capabilities\/(streaming|pushNotifications|stateTransitionHistory)$/, /^\/supportsAuthenticatedExtendedCard$/, /^\/capabilities\/extensions\/\d+\/required$/];

/**
 * JSON Pointers of the `false` and `0` values of a v0.3 card that a signature in a2a-python
 * 0.3.21 to 0.3.23's form (which leaves them all out) does not cover, where that matters: in an
 * extension's `params`, a member outside the schema, a list (where leaving one out also moves
 * the items after it). Such a value could be removed, added or moved without breaking the
 * signature. The schema's own booleans (ABSENT_MEANS_FALSE) mean the same left out.
 */
export function uncoveredFalsyPaths(card: JsonObject): string[] {
  const out: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (out.length >= MAX_UNCOVERED) return;
    if (value === false || value === 0) {
      if (!ABSENT_MEANS_FALSE.some((re) => re.test(path))) out.push(path);
    } else if (Array.isArray(value)) value.forEach((v, i) => walk(v, pointer(path, i)));
    else if (isObject(value)) for (const [k, v] of Object.entries(value)) walk(v, pointer(path, k));
  };
  walk(withoutSignatures(card), '');
  return out;
}

/**
 * The same payload with every character outside printable ASCII written as a \uXXXX escape, as
 * a2a-python serialises it (`json.dumps` with its default `ensure_ascii`, A2A issue #2122). It is
 * a serialisation of exactly the same JSON value, so a signature over it covers the same card.
 */
export function asciiEscaped(payload: string): string {
  return payload.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** What @a2a-js/sdk 1.3's signer signs for this v1.0 card when given its TypeScript type. */
export function sdkTypedPayload(card: JsonObject): string {
  return canonicalizeAgentCard(AgentCard.fromJSON(card));
}

const MAX_UNCOVERED = 10;

/**
 * JSON Pointers of the members of `card` (non-empty values) that its canonical form leaves out,
 * and that a signature therefore does not cover: fields outside the v1.0 card, misspelt ones.
 */
export function uncoveredPaths(card: JsonObject, generation: Generation): string[] {
  if (generation !== '1.0') return [];
  const canonical: unknown = JSON.parse(canonicalCardPayload(card, generation));
  const out: string[] = [];
  const walk = (given: unknown, kept: unknown, path: string): void => {
    if (out.length >= MAX_UNCOVERED) return;
    if (Array.isArray(given) && Array.isArray(kept)) {
      // Empty items are dropped, so positions shift after one; compare only same-length lists.
      if (given.length === kept.length) given.forEach((g, i) => walk(g, kept[i], pointer(path, i)));
      return;
    }
    if (!isObject(given) || !isObject(kept)) return;
    for (const [key, value] of Object.entries(given)) {
      // Empty and default values (false, 0) are left out of the canonical form by design.
      if (withoutEmpty(value) === undefined || value === false || value === 0) continue;
      if (!(key in kept)) out.push(pointer(path, key));
      else walk(value, kept[key], pointer(path, key));
    }
  };
  walk(withoutSignatures(card), canonical, '');
  return out.slice(0, MAX_UNCOVERED);
}
