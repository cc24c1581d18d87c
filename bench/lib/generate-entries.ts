/**
 * Realistic generated registry entries for benchmarks (search now, HTTP later): A2A v1.0 agent
 * cards with 2-8 skills (tags, examples, modes) and MCP servers `{mcpServer, toolspec}` with
 * 3-15 tools (annotations, identifier-style names in every casing). Words come from
 * ./vocabulary.ts in five languages; everything is driven by a seeded PRNG, so the same
 * (count, seed) always yields the same entries.
 */
import type { EntryKind, McpServerDocument, McpTool, SearchFilter } from '../../src/contract/types.js';
import type { EntryDescription } from '../../src/contract/description.js';
import type { Subject } from '../../src/contract/subject.js';
import type { IndexedEntry } from '../../src/search/types.js';
import { describeAgentCard, describeMcpServer } from '../../src/registry/describe.js';
import { AUDIENCES, DOMAINS, LANGS, MODES, ORGANIZATIONS, type Domain, type Lang } from './vocabulary.js';

/** mulberry32: small, fast, good enough for test data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Pick {
  constructor(readonly random: () => number) {}
  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.random() < p;
  }
  one<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)] as T;
  }
  /** Zipf-like: early items are picked much more often than late ones. */
  skewed<T>(list: readonly T[]): T {
    const r = this.random();
    return list[Math.floor(r * r * list.length)] as T;
  }
  some<T>(list: readonly T[], n: number): T[] {
    const out = new Set<T>();
    for (let i = 0; i < n * 3 && out.size < n; i++) out.add(this.one(list));
    return [...out];
  }
}

/** A v1.0 agent card as a peer would register it (JSON-compatible). */
export interface AgentCardJson {
  name: string;
  description: string;
  version: string;
  supportedInterfaces: { url: string; protocolBinding: string; protocolVersion: string }[];
  provider?: { organization: string; url: string };
  capabilities: { streaming?: boolean; pushNotifications?: boolean };
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: {
    id: string;
    name: string;
    description: string;
    tags: string[];
    examples?: string[];
    inputModes?: string[];
    outputModes?: string[];
  }[];
}

export type GeneratedEntry =
  | { kind: 'agent'; id: string; owner: string; updatedAt: string; document: AgentCardJson }
  | { kind: 'mcp-server'; id: string; owner: string; updatedAt: string; document: McpServerDocument };

const cap = (s: string): string => (s ? s[0]!.toUpperCase() + s.slice(1) : s);
const slug = (s: string): string =>
  s.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

function pickLang(p: Pick): Lang {
  const r = p.random();
  return r < 0.7 ? 'en' : r < 0.8 ? 'de' : r < 0.9 ? 'es' : r < 0.95 ? 'it' : 'id';
}

function sentence(p: Pick, lang: Lang, dom: Domain, other: Domain): string {
  const w = dom.words[lang];
  const o = other.words[lang];
  const n1 = p.skewed(w.nouns);
  const n2 = p.one(w.nouns);
  const n3 = p.one(o.nouns);
  const v = p.skewed(w.verbs);
  const a = p.one(AUDIENCES[lang]);
  switch (lang) {
    case 'en':
      return p.one([
        `Helps you ${v} ${n1} and ${n2} for ${a}.`,
        `${cap(v)} ${n1}, ${n2} and ${n3} with a single request.`,
        `An assistant that can ${v} your ${n1} and keep track of ${n3}.`,
      ]);
    case 'de':
      return p.one([`Hilft ${a} beim ${cap(v)} von ${n1} und ${n2}.`, `${n1} und ${n3} ${v}, schnell und zuverlässig.`]);
    case 'es':
      return p.one([`Ayuda a ${a} a ${v} ${n1} y ${n2}.`, `Permite ${v} ${n1}, ${n2} y ${n3} en segundos.`]);
    case 'it':
      return p.one([`Aiuta ${a} a ${v} ${n1} e ${n2}.`, `Permette di ${v} ${n1}, ${n2} e ${n3} in pochi secondi.`]);
    case 'id':
      return p.one([`Membantu ${a} ${v} ${n1} dan ${n2}.`, `Dapat ${v} ${n1}, ${n2} dan ${n3} dengan cepat.`]);
  }
}

function example(p: Pick, lang: Lang, dom: Domain): string {
  const w = dom.words[lang];
  const n = p.one(w.nouns);
  const v = p.one(w.verbs);
  switch (lang) {
    case 'en':
      return p.one([`Please ${v} my ${n} for next week`, `Can you ${v} the ${n}?`, `${cap(v)} ${n} in Berlin`]);
    case 'de':
      return `Bitte ${n} ${v}`;
    case 'es':
      return `Por favor ${v} mi ${n}`;
    case 'it':
      return `Per favore ${v} il ${n}`;
    case 'id':
      return `Tolong ${v} ${n} saya`;
  }
}

function modes(p: Pick, n: number): string[] {
  return p.some(MODES.slice(0, p.chance(0.7) ? 4 : MODES.length), n);
}

function agentCard(p: Pick, i: number): AgentCardJson {
  const lang = pickLang(p);
  const dom = p.skewed(DOMAINS);
  const other = p.one(DOMAINS);
  const w = dom.words[lang];
  const main = p.skewed(w.nouns);
  const name =
    lang === 'en'
      ? p.one([`${cap(main)} Agent`, `${cap(main)} ${cap(p.one(w.nouns))} Assistant`, `${p.one(ORGANIZATIONS).split(' ')[0]} ${cap(main)} Bot`])
      : lang === 'de'
        ? `${cap(main)}-Assistent`
        : lang === 'es'
          ? `Asistente de ${main}`
          : lang === 'it'
            ? `Assistente ${main}`
            : `Asisten ${main}`;
  const skillCount = p.int(2, 8);
  const skills: AgentCardJson['skills'] = [];
  const used = new Set<string>();
  for (let s = 0; s < skillCount; s++) {
    const sd = p.chance(0.75) ? dom : other;
    const sw = sd.words[lang];
    const verb = p.skewed(sw.verbs);
    const noun = p.skewed(sw.nouns);
    let id = slug(`${verb}-${noun}`) || `skill-${s}`;
    if (used.has(id)) id = `${id}-${s}`;
    used.add(id);
    const skill: AgentCardJson['skills'][number] = {
      id,
      name: lang === 'de' ? `${cap(noun)} ${verb}` : `${cap(verb)} ${noun}`,
      description: sentence(p, lang, sd, other),
      tags: p.some(sd.tags, p.int(1, 4)),
    };
    if (p.chance(0.7)) skill.examples = Array.from({ length: p.int(1, 3) }, () => example(p, lang, sd));
    if (p.chance(0.3)) skill.inputModes = modes(p, p.int(1, 2));
    if (p.chance(0.3)) skill.outputModes = modes(p, p.int(1, 2));
    skills.push(skill);
  }
  const host = `${slug(main) || 'agent'}-${i}.example.com`;
  const bindings = p.some(['JSONRPC', 'JSONRPC', 'HTTP+JSON', 'GRPC'], p.int(1, 2));
  const version = p.one(['1.0', '1.0', '1.0.0', '1.0.1', '0.3.0']);
  const card: AgentCardJson = {
    name,
    description: sentence(p, lang, dom, other),
    version: `${p.int(0, 3)}.${p.int(0, 9)}.${p.int(0, 20)}`,
    supportedInterfaces: bindings.map((b) => ({ url: `https://${host}/${b === 'GRPC' ? 'grpc' : 'a2a'}`, protocolBinding: b, protocolVersion: version })),
    capabilities: { streaming: p.chance(0.5), pushNotifications: p.chance(0.2) },
    defaultInputModes: modes(p, p.int(1, 3)),
    defaultOutputModes: modes(p, p.int(1, 3)),
    skills,
  };
  if (p.chance(0.6)) {
    const org = p.one(ORGANIZATIONS);
    card.provider = { organization: org, url: `https://${slug(org)}.example.com` };
  }
  return card;
}

function toolName(p: Pick, verb: string, noun: string, prefix: string): string {
  const parts = [...verb.split('_'), ...noun.split('_')];
  switch (p.int(0, 5)) {
    case 0:
    case 1:
      return parts.join('_');
    case 2:
      return parts[0] + parts.slice(1).map(cap).join('');
    case 3:
      return parts.join('-');
    case 4:
      return parts.map(cap).join('');
    default:
      return `${prefix}.${parts.join('_')}`;
  }
}

function mcpServer(p: Pick, i: number): McpServerDocument {
  const dom = p.skewed(DOMAINS);
  const other = p.one(DOMAINS);
  const lang: Lang = p.chance(0.85) ? 'en' : p.one(LANGS);
  const base = p.one(dom.toolNouns).replace(/_/g, '-');
  const name = `${dom.key}-${base}`;
  const count = p.int(3, 15);
  const tools: McpTool[] = [];
  const used = new Set<string>();
  for (let t = 0; t < count; t++) {
    const verb = p.skewed(dom.toolVerbs);
    const noun = p.one(dom.toolNouns);
    let tn = toolName(p, verb, noun, dom.key);
    if (used.has(tn)) tn = `${tn}_${t}`;
    used.add(tn);
    const tool: McpTool = {
      name: tn,
      description: sentence(p, lang, dom, other),
      inputSchema: { type: 'object', properties: { [noun]: { type: 'string', description: `The ${noun.replace(/_/g, ' ')}` } }, required: [noun] },
    };
    const title = `${cap(verb)} ${noun.replace(/_/g, ' ')}`;
    if (p.chance(0.4)) tool.title = title;
    if (p.chance(0.6)) {
      const a: NonNullable<McpTool['annotations']> = {};
      if (p.chance(0.3)) a.title = title;
      const readOnly = verb === 'get' || verb === 'list' || verb === 'search' || verb === 'read';
      if (p.chance(0.8)) a.readOnlyHint = readOnly;
      if (p.chance(0.5)) a.destructiveHint = !readOnly && p.chance(0.5);
      if (p.chance(0.5)) a.idempotentHint = p.chance(0.5);
      if (p.chance(0.5)) a.openWorldHint = p.chance(0.5);
      tool.annotations = a;
    }
    tools.push(tool);
  }
  return {
    mcpServer: { name, url: `https://mcp-${i}.example.com/mcp`, description: sentence(p, lang, dom, other), version: `${p.int(0, 3)}.${p.int(0, 9)}.0` },
    toolspec: { tools },
  };
}

const EPOCH = Date.parse('2024-01-01T00:00:00Z');
const TWO_YEARS = 2 * 365 * 24 * 3600 * 1000;

/** The `i`-th entry of a generated stream (70% agents, 30% MCP servers). */
function generateOne(p: Pick, i: number): GeneratedEntry {
  // Shaped as the registry's ids are (UUIDs: ../../src/search/entry-ids.ts keeps those as bytes), in the order of i.
  const id = `00000000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
  const owner = `owner-${Math.floor(p.random() ** 2 * 500)}`;
  const updatedAt = new Date(EPOCH + Math.floor(p.random() * TWO_YEARS)).toISOString();
  return p.chance(0.7)
    ? { kind: 'agent', id, owner, updatedAt, document: agentCard(p, i) }
    : { kind: 'mcp-server', id, owner, updatedAt, document: mcpServer(p, i) };
}

/** `count` entries, deterministic for a given seed. */
export function generateEntries(count: number, seed = 42): GeneratedEntry[] {
  const p = new Pick(prng(seed));
  return Array.from({ length: count }, (_, i) => generateOne(p, i));
}

/** The same entries one at a time, for callers that should not hold them all. */
export function* streamEntries(count: number, seed = 42): Generator<GeneratedEntry> {
  const p = new Pick(prng(seed));
  for (let i = 0; i < count; i++) yield generateOne(p, i);
}

/** A generated entry as a registration's subject (for loading through RegistryService.register). */
export function subjectOfGenerated(entry: GeneratedEntry): Subject {
  const text = JSON.stringify(entry.kind === 'agent' ? entry.document : entry.document.toolspec);
  return entry.kind === 'agent'
    ? { type: 'agent-card', card: entry.document, documentText: text, sizeBytes: Buffer.byteLength(text) }
    : { type: 'mcp-server', server: entry.document.mcpServer, toolspec: entry.document.toolspec, toolspecText: text, sizeBytes: Buffer.byteLength(text) };
}

/** The description the registry would index for a generated entry. */
export function describeGenerated(e: GeneratedEntry): EntryDescription {
  return e.kind === 'agent' ? describeAgentCard(e.document, '1.0') : describeMcpServer(e.document);
}

/**
 * A generated entry as the registry hands it to the search index (its description through a JSON
 * round trip, as stored). Its place in list's order is its time in ms, so the entries come in
 * random order, as before (where the index took the time itself).
 */
export function indexedGenerated(g: GeneratedEntry): IndexedEntry {
  return { id: g.id, owner: g.owner, listSeq: Date.parse(g.updatedAt), description: JSON.parse(JSON.stringify(describeGenerated(g))) as EntryDescription };
}

/**
 * An entry as an older checkout's index takes it (bench/search.ts and bench/search-agreement.ts
 * --compare): the place in list's order as the time it ordered by, registration (createdAt) or
 * last change (updatedAt) before that, so both versions order ties alike.
 */
export function withTimes<T extends IndexedEntry>(e: T): T & { createdAt: string; updatedAt: string } {
  const at = new Date(e.listSeq).toISOString();
  return { ...e, createdAt: at, updatedAt: at };
}

export interface GeneratedQuery {
  text: string;
  filter?: SearchFilter;
}

/** Every word of the vocabulary, for query generation. */
export function vocabularyWords(): string[] {
  const out = new Set<string>();
  for (const dom of DOMAINS) {
    for (const t of dom.tags) out.add(t);
    for (const lang of LANGS) for (const w of [...dom.words[lang].nouns, ...dom.words[lang].verbs]) out.add(w);
    for (const w of [...dom.toolVerbs, ...dom.toolNouns]) out.add(w.replace(/_/g, ' '));
  }
  return [...out];
}

/** 1-3 word queries over the vocabulary; with `filtered`, each also carries one or two filters. */
export function generateQueries(count: number, seed: number, filtered: boolean): GeneratedQuery[] {
  const p = new Pick(prng(seed));
  const words = vocabularyWords();
  const tags = [...new Set(DOMAINS.flatMap((dm) => dm.tags))];
  const filters: (() => SearchFilter)[] = [
    () => ({ kind: p.one<EntryKind>(['agent', 'mcp-server']) }),
    () => ({ tags: [p.one(tags)] }),
    () => ({ inputModes: [p.one(['text/plain', 'application/json', 'image/png', 'application/pdf'])] }),
    () => ({ protocolBinding: p.one(['JSONRPC', 'HTTP+JSON', 'GRPC']) }),
    () => ({ protocolVersion: p.one(['1.0', '0.3']) }),
    () => ({ streaming: true }),
    () => ({ readOnly: p.chance(0.5) }),
    () => ({ destructive: false }),
    () => ({ owner: `owner-${p.int(0, 499)}` }),
  ];
  return Array.from({ length: count }, () => {
    const n = p.int(1, 3);
    let text = Array.from({ length: n }, () => p.one(words)).join(' ');
    // One query in five is still being typed: its last word is cut short.
    if (p.chance(0.2)) {
      const last = text.lastIndexOf(' ') + 1;
      const word = text.slice(last);
      if (word.length > 5) text = text.slice(0, last) + word.slice(0, p.int(4, word.length - 1));
    }
    if (!filtered) return { text };
    const filter: SearchFilter = Object.assign({}, p.one(filters)(), p.chance(0.3) ? p.one(filters)() : {});
    return { text, filter };
  });
}
