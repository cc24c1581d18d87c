/**
 * The legacy-compatible ("superset") agent card: the v1.0 card plus the v0.3 fields, one
 * document that both generations of clients read.
 *
 * v0.3 clients find an agent by the card's `url`, `preferredTransport` and `protocolVersion`
 * (absent from v1.0 cards: @a2a-js/sdk 0.3 fails with "No compatible transport found", python
 * a2a-sdk 0.3 cannot validate the card); v1.0 clients read `supportedInterfaces` and ignore
 * fields they do not know (spec section 5.7: implementations SHOULD ignore unrecognized fields).
 * The v0.3 part is what @a2a-js/sdk's own legacy card handler derives from a v1.0 card
 * (toCompatAgentCard: the first 0.3 interface is the primary one, the other 0.3 interfaces are
 * additionalInterfaces, security requirements become `security`), except that
 * additionalInterfaces also lists the primary one, first; test/conformance-card.test.ts pins
 * that so an SDK upgrade that changes the translation shows. Unlike the SDK's card,
 * the v1.0 fields stay whole: security schemes carry both their v1.0 member
 * (`httpAuthSecurityScheme`) and the v0.3 `type` discriminator, and requirements both
 * `securityRequirements` and `security`, so a v1.0 client reading this card (one that sends no
 * A2A-Version header) still knows to send its token.
 */
import { majorMinor } from './version-numbers.js';
import { isObject, pointer } from '../lib/json.js';

type Json = Record<string, unknown>;

interface WireInterface {
  url: string;
  protocolBinding: string;
  protocolVersion?: string;
}

interface WireRequirement {
  schemes?: Record<string, { list?: string[] }>;
}

/** A version in [0.3, 1.0): what v0.3 clients speak. */
export function isLegacyVersion(version: string | undefined): boolean {
  const mm = majorMinor(version ?? '');
  if (!mm) return false;
  const [major, minor] = mm.split('.').map(Number) as [number, number];
  return major === 0 && minor >= 3;
}

/** v1.0 `securityRequirements` → v0.3 `security` (OpenAPI style: scheme name → scopes). */
const toLegacyRequirements = (requirements: WireRequirement[]): Json[] =>
  requirements.map((r) => Object.fromEntries(Object.entries(r.schemes ?? {}).map(([name, scopes]) => [name, [...(scopes.list ?? [])]])));

const withoutEmpty = (o: Json): Json => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== ''));

/** The v0.3 discriminated form of a v1.0 security scheme, merged into it. */
function withLegacyScheme(name: string, scheme: Json): Json {
  const [member, inner] = Object.entries(scheme).find(([, v]) => isObject(v)) as [string, Json] | [undefined, undefined];
  switch (member) {
    case 'httpAuthSecurityScheme':
      return { ...scheme, ...withoutEmpty({ type: 'http', scheme: inner!.scheme, description: inner!.description, bearerFormat: inner!.bearerFormat }) };
    case 'apiKeySecurityScheme': {
      const location = inner!.location === 'query' || inner!.location === 'cookie' ? inner!.location : 'header';
      return { ...scheme, ...withoutEmpty({ type: 'apiKey', name: inner!.name, in: location, description: inner!.description }) };
    }
    case 'mtlsSecurityScheme':
      return { ...scheme, ...withoutEmpty({ type: 'mutualTLS', description: inner!.description }) };
    case 'openIdConnectSecurityScheme':
      return { ...scheme, ...withoutEmpty({ type: 'openIdConnect', openIdConnectUrl: inner!.openIdConnectUrl, description: inner!.description }) };
    default:
      // OAuth2 flows need a real translation; the registry's card has none. Fail at start-up
      // rather than serve v0.3 clients a scheme they cannot read.
      throw new Error(`agent-card.json: security scheme "${name}" (${member ?? 'empty'}) has no v0.3 translation here; add one in src/protocol/legacy-card.ts.`);
  }
}

/** The superset card of a v1.0 card (which must declare at least one 0.3 interface). */
export function legacyCompatibleCard(card: Json): Json {
  const interfaces = (card.supportedInterfaces ?? []) as WireInterface[];
  const legacy = interfaces.filter((i) => isLegacyVersion(i.protocolVersion));
  const primary = legacy[0];
  if (!primary) throw new Error('agent-card.json declares no interface with protocolVersion 0.3: v0.3 clients could not use the registry.');
  const capabilities = isObject(card.capabilities) ? card.capabilities : {};
  const requirements = card.securityRequirements as WireRequirement[] | undefined;
  const schemes = isObject(card.securitySchemes) ? card.securitySchemes : undefined;

  const superset: Json = {
    name: card.name,
    description: card.description,
    version: card.version,
    url: primary.url,
    preferredTransport: primary.protocolBinding,
    protocolVersion: primary.protocolVersion,
    // Every v0.3 transport, the main url and preferredTransport first: v0.3 (section 5.6) says a
    // card that lists additionalInterfaces SHOULD list them all, the main one included (the
    // SDK's translation leaves it out). With a single transport there is nothing to add.
    ...(legacy.length > 1 ? { additionalInterfaces: legacy.map((i) => ({ url: i.url, transport: i.protocolBinding })) } : {}),
    ...card,
  };
  if (capabilities.extendedAgentCard !== undefined) superset.supportsAuthenticatedExtendedCard = capabilities.extendedAgentCard;
  if (schemes) superset.securitySchemes = Object.fromEntries(Object.entries(schemes).map(([name, s]) => [name, withLegacyScheme(name, s as Json)]));
  if (requirements?.length) superset.security = toLegacyRequirements(requirements);
  if (Array.isArray(card.skills)) {
    superset.skills = card.skills.map((skill: Json) => {
      const skillRequirements = skill.securityRequirements as WireRequirement[] | undefined;
      return skillRequirements?.length ? { ...skill, security: toLegacyRequirements(skillRequirements) } : skill;
    });
  }
  return superset;
}

/** The top-level members legacyCompatibleCard adds to a v1.0 card. */
const SUPERSET_ONLY = ['url', 'preferredTransport', 'protocolVersion', 'additionalInterfaces', 'supportsAuthenticatedExtendedCard', 'security'];

/** Whether a card is a superset card: a v1.0 card (`supportedInterfaces`) that also has v0.3 members. */
export function isSupersetCard(card: unknown): card is Json {
  return isObject(card) && Array.isArray(card.supportedInterfaces) && SUPERSET_ONLY.some((k) => k in card);
}

/**
 * A superset card taken apart (legacyCompatibleCard's inverse), in one walk so the card and the
 * list of what it lost cannot disagree: `card`, the v1.0 card inside it, which is what its
 * signatures cover (the v0.3 members go, each security scheme keeps only its v1.0 member, the
 * one object among its values, and skills lose their v0.3 `security`); `dropped`, where those
 * members sat (JSON Pointers, in document order), an `additionalInterfaces` list item by item:
 * each is an endpoint v0.3 clients dial.
 */
function splitSuperset(superset: Json): { card: Json; dropped: string[] } {
  const dropped: string[] = [];
  // Entries, made into objects by Object.fromEntries: a member named "__proto__" stays a member.
  const kept: Array<[string, unknown]> = [];
  /** `object` without the members `drop` picks, each named under `at`. */
  const without = (object: Json, at: string, drop: (member: string, value: unknown) => boolean): Json => {
    const members: Array<[string, unknown]> = [];
    for (const [member, value] of Object.entries(object)) {
      if (drop(member, value)) dropped.push(pointer(at, member));
      else members.push([member, value]);
    }
    return Object.fromEntries(members);
  };
  for (const [key, value] of Object.entries(superset)) {
    if (SUPERSET_ONLY.includes(key)) {
      if (key === 'additionalInterfaces' && Array.isArray(value) && value.length > 0) value.forEach((_, i) => dropped.push(pointer('', key, i)));
      else dropped.push(pointer('', key));
    } else if (key === 'securitySchemes' && isObject(value)) {
      kept.push([key, Object.fromEntries(Object.entries(value).map(([name, scheme]) => [name, isObject(scheme) ? without(scheme, pointer('/securitySchemes', name), (_, v) => !isObject(v)) : scheme]))]);
    } else if (key === 'skills' && Array.isArray(value)) {
      kept.push([key, value.map((skill: unknown, i) => (isObject(skill) ? without(skill, pointer('/skills', i), (member) => member === 'security') : skill))]);
    } else {
      kept.push([key, value]);
    }
  }
  return { card: Object.fromEntries(kept), dropped };
}

/** The v1.0 card inside a superset card: what its signatures cover (splitSuperset). */
export const v10CardOfSuperset = (superset: Json): Json => splitSuperset(superset).card;

/** Where the members v10CardOfSuperset drops sat in a superset card: the v0.3 part its signatures do not cover (splitSuperset). */
export const supersetOnlyPaths = (superset: Json): string[] => splitSuperset(superset).dropped;
