/**
 * Discovery end to end through the SDK client, on a registry loaded with every valid card and
 * toolspec of the corpus (test/fixtures/corpus) plus generated entries: ranked hits, filters, paging, streaming,
 * immediacy of changes and restarts.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@a2a-js/sdk/client';
import { generateEntries } from '../bench/lib/generate-entries.js';
import { dataPart, errorOf, op, resultOf, sdkClient, send, stateOf, stream, textPart, type WireJson } from './support/client.js';
import { mcpServer, v1Card } from './support/documents.js';
import { metricValue } from './support/metrics.js';
import { CORPUS_DIR, TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

let registry: TestRegistry;
/** Known to the tests that sign what the registry would not. */
const PAGE_TOKEN_SECRET = 'search-test-page-token-secret-0123456789';
let writer: Client;
let reader: Client;
/** Accepted corpus agents: entry id -> card. */
const corpusAgents = new Map<string, WireJson>();
/** Accepted corpus toolspecs: entry id -> toolspec. */
const corpusServers = new Map<string, WireJson>();

const search = async (args: WireJson, client: Client = reader): Promise<WireJson> => resultOf(await op(client, { search: args }));

/** Every hit of a query, following page tokens. */
async function allHits(args: WireJson): Promise<WireJson[]> {
  const hits: WireJson[] = [];
  let pageToken: string | undefined;
  do {
    const page = await search({ ...args, limit: 100, ...(pageToken ? { pageToken } : {}) });
    hits.push(...page.results);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return hits;
}

function readCorpus(folder: string): { file: string; json: unknown }[] {
  const dir = path.join(CORPUS_DIR, folder);
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .flatMap((file) => {
      try {
        return [{ file, json: JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as unknown }];
      } catch {
        return [];
      }
    });
}

before(async () => {
  registry = await startTestRegistry({ REGISTRY_PAGE_TOKEN_SECRET: PAGE_TOKEN_SECRET });
  writer = await sdkClient(registry.url, { token: TOKENS.alice });
  reader = await sdkClient(registry.url);
  // Corpus documents far over the size limit are refused before they reach the executor (a
  // JSON-RPC error the SDK throws); those, and REJECTED ones, are simply not loaded.
  const tryOp = (args: unknown) => op(writer, args).catch(() => ({ status: { state: 'refused' } }) as WireJson);
  for (const { json } of readCorpus('cards')) {
    const task = await tryOp({ register: { agentCard: json } });
    if (stateOf(task) === 'TASK_STATE_COMPLETED') {
      const id = resultOf(task).id;
      corpusAgents.set(id, json as WireJson);
    }
  }
  for (const [i, { json }] of readCorpus('toolspecs').entries()) {
    const task = await tryOp({ register: { mcpServer: mcpServer(`corpus-server-${i}`, `https://mcp.example.org/corpus/${i}`), toolspec: json } });
    if (stateOf(task) === 'TASK_STATE_COMPLETED') {
      const id = resultOf(task).id;
      corpusServers.set(id, json as WireJson);
    }
  }
  for (const entry of generateEntries(300, 7)) {
    const args = entry.kind === 'agent' ? { agentCard: entry.document } : entry.document;
    resultOf(await op(writer, { register: args }));
  }
});
after(() => registry.close());

/** The Quoll agents' skills a query finds, each as "name: fields" (search.test's words written in parts), sorted. */
async function quollSkills(query: string): Promise<string[]> {
  return (await allHits({ query, resultsPer: 'match' }))
    .filter((h) => (h.name as string).startsWith('Quoll') && h.match.type === 'skill')
    .map((h) => `${h.name}: ${h.match.fields.join(',')}`)
    .sort();
}

describe('corpus', () => {
  test('the corpus loads: some cards and toolspecs are valid', () => {
    assert.ok(corpusAgents.size >= 3, `only ${corpusAgents.size} corpus cards were accepted`);
    assert.ok(corpusServers.size >= 3, `only ${corpusServers.size} corpus toolspecs were accepted`);
  });

  test('every accepted corpus skill is found by a word of its name, a tag and an example', async () => {
    const word = (s: string) => s.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 4).sort((a, b) => b.length - a.length)[0];
    let checked = 0;
    for (const [id, card] of corpusAgents) {
      for (const skill of (card.skills as WireJson[]).slice(0, 2)) {
        for (const source of [skill.name, skill.tags?.[0], skill.examples?.[0]]) {
          const w = typeof source === 'string' ? word(source) : undefined;
          if (!w) continue;
          const hits = await allHits({ query: w, filter: { kind: 'agent' } });
          assert.ok(
            hits.some((h) => h.id === id),
            `"${w}" (from skill ${skill.id} of ${card.name}) did not find it among ${hits.length} hits`,
          );
          checked++;
        }
      }
    }
    assert.ok(checked >= 10, `only ${checked} checks ran`);
  });

  test('every accepted corpus tool is found by a word of its name', async () => {
    for (const [id, toolspec] of corpusServers) {
      const tool = (toolspec.tools as WireJson[])[0]!;
      const w = String(tool.name).split(/[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])/).filter((s) => s.length >= 3)[0];
      if (!w) continue;
      const hits = await allHits({ query: w, filter: { kind: 'mcp-server' } });
      const hit = hits.find((h) => h.id === id && h.match.type === 'tool');
      assert.ok(hits.some((h) => h.id === id), `"${w}" did not find the server of ${tool.name}`);
      if (hit) assert.equal(hit.interfaces[0].protocolBinding, 'MCP');
    }
  });
});

describe('matching', () => {
  before(async () => {
    const card = (name: string, url: string, skills: WireJson[]) => ({ ...v1Card(name, url), skills });
    const skill = (id: string, name: string, description: string, tags: string[], examples: string[]) => ({ id, name, description, tags, examples });
    await op(writer, { register: { agentCard: card('Überweisungsagent', 'https://de.example.org/a2a', [skill('ueberweisung', 'Überweisung ausführen', 'Führt eine SEPA-Überweisung aus.', ['bank', 'zahlung'], ['Überweise 50 Euro an Anna'])]) } });
    await op(writer, { register: { agentCard: card('Agente de traducción', 'https://es.example.org/a2a', [skill('traduccion', 'Traducción de documentos', 'Traduce documentos legales al español.', ['traducción', 'idiomas'], ['Traduce este contrato'])]) } });
    await op(writer, { register: { agentCard: card('Guida della città', 'https://it.example.org/a2a', [skill('citta', 'Consigli sulla città', 'Suggerisce musei e ristoranti in città.', ['viaggi', 'turismo'], ['Cosa vedere a Firenze?'])]) } });
    await op(writer, { register: { agentCard: card('Agen Cuaca', 'https://id.example.org/a2a', [skill('cuaca', 'Prakiraan cuaca', 'Memberikan prakiraan cuaca untuk kota di Indonesia.', ['cuaca', 'iklim'], ['Bagaimana cuaca di Jakarta besok?'])]) } });
    await op(writer, { register: { agentCard: card('🌤 Nimbus', 'https://nimbus.example.org/a2a', [skill('forecast', 'Forecast ☀️', 'Sunny or 🌧 days ahead.', ['weather'], ['Will it rain?'])]) } });
    await op(writer, { register: { agentCard: card('हिन्दी अनुवादक', 'https://hi.example.org/a2a', [skill('anuvad', 'किताब का अनुवाद', 'किताबों का हिन्दी में अनुवाद करता है।', ['अनुवाद'], ['यह किताब पढ़ो'])]) } });
    await op(writer, { register: { agentCard: card('Fah Sai', 'https://th.example.org/a2a', [skill('forecast', 'บริการพยากรณ์อากาศ', 'พยากรณ์อากาศรายวัน', ['อากาศ'], ['พรุ่งนี้ฝนตกไหม'])]) } });
    await op(writer, { register: { agentCard: card('Kutta Walker', 'https://kutta.example.org/a2a', [skill('walk', 'कुत्ता बाबू', 'Walks dogs.', ['dogs'], ['walk my dog'])]) } });
    // Exact names, registered before entries that say their words more often (a tie goes to the newer entry).
    await op(writer, { register: { agentCard: card('Numbat', 'https://numbat.example.org/a2a', [skill('count', 'Counting', 'Counts animals in the woodlands.', ['wildlife'], ['How many?'])]) } });
    await op(writer, { register: { agentCard: card('Tally Ledger Agent', 'https://tally.example.org/a2a', [skill('book', 'Bookkeeping', 'Keeps the books.', ['accounting'], ['Close the month'])]) } });
    // Names with a letter written before a hyphen, then an entry saying their words, joined, more often.
    await op(writer, { register: { agentCard: card('E-mail Sender', 'https://es.example.net/a2a', [skill('outbox', 'Outbox', 'Sends messages.', ['outbox'], ['Send this'])]) } });
    await op(writer, { register: { agentCard: card('E-Mail-Versand', 'https://ev.example.net/a2a', [skill('post', 'Post', 'Verschickt Nachrichten.', ['post'], ['Schick das'])]) } });
    // Names with hyphenated words, then an entry saying them as one word more often.
    await op(writer, { register: { agentCard: card('Co-Pilot', 'https://cp.example.net/a2a', [skill('assist', 'Assist', 'Drafts replies.', ['drafts'], ['Draft this'])]) } });
    await op(writer, { register: { agentCard: card('Text-to-Speech', 'https://tts.example.net/a2a', [skill('speak', 'Speak', 'Reads aloud.', ['voice'], ['Read this'])]) } });
    await op(writer, {
      register: {
        agentCard: card('Copilot Texttospeech Hub', 'https://ch.example.net/a2a', [
          skill('route', 'Copilot texttospeech routing', 'A copilot for every texttospeech: the copilot and texttospeech.', ['copilot', 'texttospeech'], ['copilot texttospeech']),
        ]),
      },
    });
    await op(writer, {
      register: {
        agentCard: card('Email Sender Versand Hub', 'https://eh.example.net/a2a', [
          skill('route', 'Email sender versand routing', 'An email sender for every email versand: the email sender and email versand.', ['email', 'sender', 'versand'], ['email sender versand']),
        ]),
      },
    });
    await op(writer, {
      register: {
        agentCard: card('Numbat Tally Ledger Agent Hub', 'https://hub.example.org/a2a', [
          skill('tally', 'Tally ledger agent routing', 'A tally ledger agent for every numbat: the tally ledger agent of numbat tours.', ['numbat', 'tally', 'ledger'], ['numbat tally ledger agent']),
        ]),
      },
    });
    // Skills and tools of exact names, registered before entries that say their words more often
    // (in names that go on, descriptions, tags).
    const tools = (names: string[], description: (name: string) => string) => ({
      tools: names.map((name) => ({ name, description: description(name), inputSchema: { type: 'object' } })),
    });
    await op(writer, { register: { mcpServer: mcpServer('potoroo-git', 'https://mcp.example.org/potoroo-git'), toolspec: tools(['create_pull_request', 'search-flights', 'bandicoot', 'get_a_quote', 'E-mail Sender'], () => 'Does it.') } });
    await op(writer, {
      register: {
        agentCard: card('Potoroo Exchange', 'https://px.example.org/a2a', [skill('fx', 'Currency Conversion', 'Converts money.', ['money'], ['100 EUR in USD']), skill('mail', 'E-mail Sender', 'Mails receipts.', ['receipts'], ['Mail it'])]),
      },
    });
    await op(writer, {
      register: {
        mcpServer: mcpServer('potoroo-forge', 'https://mcp.example.org/potoroo-forge'),
        toolspec: tools(['create_pull_request_review', 'search_flights_cheaply', 'bandicoot_lookup', 'get_quote'], (name) => `${name.replace(/[_-]/g, ' ')}: ${name.replace(/[_-]/g, ' ')}, bandicoot.`),
      },
    });
    await op(writer, {
      register: {
        agentCard: card('Potoroo Currency Conversion Desk', 'https://pd.example.org/a2a', [
          skill('rates', 'Currency conversion rates', 'Currency conversion for every currency: conversion tables.', ['currency', 'conversion'], ['currency conversion']),
        ]),
      },
    });
    await op(writer, { register: { agentCard: card('Kestrel C++ Mentor', 'https://cpp.example.org/a2a', [skill('templates', 'Explain templates', 'Explains C++17 templates.', ['c++'], ['Why does my C++ code not compile?'])]) } });
    await op(writer, { register: { agentCard: card('Kestrel Reviewer', 'https://cs.example.org/a2a', [skill('review', 'Review code', 'Reviews C# and F# code (.NET).', ['c#', 'f#'], ['Review this C# class'])]) } });
    // Tags with a stop word or a letter in them, and beside them the tags they were taken for; words written together.
    await op(writer, { register: { agentCard: card('Bilby Voice', 'https://qv.example.org/a2a', [skill('speak', 'Speak', 'Reads aloud.', ['text-to-speech'], ['Read this'])]) } });
    await op(writer, { register: { agentCard: card('Bilby Transcoder', 'https://qt.example.org/a2a', [skill('convert', 'Convert', 'Converts.', ['text-speech'], ['Convert this'])]) } });
    await op(writer, { register: { agentCard: card('Bilby Helpdesk', 'https://qh.example.org/a2a', [skill('desk', 'Desk', 'Helps staff.', ['IT-Support'], ['My laptop'])]) } });
    await op(writer, { register: { agentCard: card('Bilby Forum', 'https://qf.example.org/a2a', [skill('forum', 'Forum', 'Answers.', ['support'], ['A question'])]) } });
    await op(writer, { register: { agentCard: card('Wallaby Mobile', 'https://wm.example.org/a2a', [skill('apps', 'Apps', 'Builds iOS apps with BilbyKit and the QK-9 engine.', ['mobile'], ['An app'])]) } });
    await op(writer, { register: { agentCard: card('Wallaby Tablet', 'https://wt.example.org/a2a', [skill('apps', 'Apps', 'Builds ios apps with bilbykit and the qk9 engine.', ['tablet'], ['An app'])]) } });
    // Words written in parts, and as one; a phrase in a name, and in a description whose skill's name has its rarer word.
    await op(writer, { register: { agentCard: card('Quoll Mailer', 'https://qm.example.org/a2a', [skill('send', 'Send e-mail', 'Sends an e-mail to anyone.', ['e-mail'], ['Write to Anna'])]) } });
    await op(writer, { register: { agentCard: card('Quoll Post', 'https://qp.example.org/a2a', [skill('send', 'Send email', 'Sends email to anyone.', ['email'], ['Write to Anna'])]) } });
    await op(writer, { register: { agentCard: card('Quoll Relay', 'https://ql.example.org/a2a', [skill('relay', 'Relay web-hooks', 'A co-pilot for pre-processing events.', ['relay'], ['Forward this'])]) } });
    await op(writer, { register: { agentCard: card('Quoll Radiology', 'https://qr.example.org/a2a', [skill('read', 'Read X-ray images', 'Reads scans aloud with TextToSpeech.', ['medical'], ['This scan'])]) } });
    await op(writer, { register: { agentCard: card('Quoll Solver', 'https://qs.example.org/a2a', [skill('solve', 'Merge conflict solver', 'Edits code.', ['git'], ['Fix this'])]) } });
    await op(writer, {
      register: {
        agentCard: card('Quoll Mediator', 'https://qd.example.org/a2a', [
          skill('mediate', 'Conflict mediator', 'Mediates disputes between teams; a merge conflict in code it leaves to the developers.', ['teams'], ['Help us agree']),
        ]),
      },
    });
    // A description saying "pull request" and, apart, "request review".
    const apart = 'Opens a pull request, then asks for a request review from the team. Also sends email summaries.';
    await op(writer, { register: { agentCard: { ...card('Dibbler Reviews', 'https://dibbler.example.org/a2a', [skill('nudge', 'Nudge', 'Nudges.', ['team'], ['Nudge them'])]), description: apart } } });
    // Quoll Relay's "co-pilot for pre-processing events" written as one word each.
    await op(writer, { register: { agentCard: card('Dibbler Drafts', 'https://dd.example.org/a2a', [skill('relay', 'Relay', 'A copilot for preprocessing events.', ['relay'], ['Forward this'])]) } });
    await op(writer, { register: { agentCard: card('Kestrel C Toolsmith', 'https://c.example.org/a2a', [skill('compile', 'Compile code', 'Compiles C code, with a C+ grade.', ['c'], ['Compile main.c'])]) } });
    await op(writer, {
      register: {
        mcpServer: mcpServer('meteo', 'https://mcp.example.org/meteo'),
        toolspec: {
          tools: ['get_weather', 'getWeatherAlerts', 'get-weather-map'].map((name) => ({
            name,
            description: `Tool ${name}.`,
            inputSchema: { type: 'object' },
            annotations: { readOnlyHint: true },
          })),
        },
      },
    });
  });

  test('case and accents do not matter, in German, Spanish, Italian and Indonesian', async () => {
    for (const [query, name] of [
      ['uberweisung', 'Überweisungsagent'],
      ['ÜBERWEISUNG', 'Überweisungsagent'],
      ['traduccion', 'Agente de traducción'],
      ['citta', 'Guida della città'],
      ['CUACA', 'Agen Cuaca'],
    ] as const) {
      const hits = (await search({ query })).results;
      assert.ok(hits.some((h: WireJson) => h.name === name), `"${query}" did not find ${name}`);
    }
  });

  test('an emoji is a word: "🌤" finds "🌤 Nimbus", whatever its presentation selector', async () => {
    // Emoji were separators: searching 🌤 found nothing, and "-🌤" asked for it instead of leaving it out.
    const names = async (query: string) => (await search({ query })).results.map((h: WireJson) => h.name);
    assert.equal((await names('🌤'))[0], '🌤 Nimbus');
    assert.equal((await names('🌤\ufe0f'))[0], '🌤 Nimbus');
    const [rain] = (await search({ query: '🌧', resultsPer: 'match' })).results;
    assert.deepEqual([rain?.name, rain?.match.id, rain?.match.fields], ['🌤 Nimbus', 'forecast', ['description']]);
    assert.ok((await names('nimbus')).includes('🌤 Nimbus'));
    assert.ok(!(await names('nimbus -🌤')).includes('🌤 Nimbus'));
  });

  test('a word keeps its vowel signs: "किताब" (book) does not find "कुत्ता" (dog)', async () => {
    // Devanagari vowel signs were separators: किताब was searched as क, त, ब, which कुत्ता बाबू has too.
    const names = async (query: string) => (await search({ query })).results.map((h: WireJson) => h.name);
    assert.deepEqual(await names('किताब'), ['हिन्दी अनुवादक']);
    assert.deepEqual(await names('हिन्दी'), ['हिन्दी अनुवादक']);
    assert.deepEqual(await names('कुत्ता'), ['Kutta Walker']);
  });

  test('Thai text, written without spaces, is found by its words', async () => {
    // A run of Thai was one term: "พยากรณ์" (forecast) did not find "บริการพยากรณ์อากาศ".
    const [hit] = (await search({ query: 'พยากรณ์', resultsPer: 'match' })).results;
    assert.deepEqual([hit?.name, hit?.match.id, hit?.match.fields], ['Fah Sai', 'forecast', ['name', 'description']]);
  });

  test('every word of a query up to REGISTRY_MAX_QUERY_CHARS counts, the last ones too', async () => {
    // The parser read the first 512 characters of a query the registry accepted up to 1,000.
    const query = `${'zqxw '.repeat(130)}cuaca`;
    assert.ok(query.length > 600 && query.length < 1000);
    assert.equal((await search({ query })).results[0]?.name, 'Agen Cuaca');
  });

  test('identifiers are split: get_weather, getWeatherAlerts and get-weather-map all match "weather"', async () => {
    // Results per entry (the default): one hit for the server, its tools under match and matches.
    const hits = await allHits({ query: 'weather', filter: { kind: 'mcp-server' } });
    const meteo = hits.filter((h) => h.name === 'meteo');
    assert.equal(meteo.length, 1);
    const tools = [meteo[0]!.match, ...(meteo[0]!.matches ?? [])].map((m: WireJson) => m.id).sort();
    assert.deepEqual(tools, ['get-weather-map', 'getWeatherAlerts', 'get_weather']);
    // Results per match: one hit per tool, at most three per entry.
    const perMatch = (await allHits({ query: 'weather', filter: { kind: 'mcp-server' }, resultsPer: 'match' })).filter((h) => h.name === 'meteo');
    assert.deepEqual(perMatch.map((h) => h.match.id).sort(), tools);
    assert.ok(perMatch.every((h) => h.matches === undefined));
  });

  test('a query names things the way people do: other word forms, typos, related words, operators', async () => {
    const names = async (query: string, extra: WireJson = {}) => (await search({ query, ...extra })).results.map((h: WireJson) => h.name);
    // Word forms, in the card's language ("Überweisung ausführen", "musei e ristoranti").
    assert.equal((await names('ausführung'))[0], 'Überweisungsagent');
    assert.equal((await names('museo'))[0], 'Guida della città');
    // A typo.
    assert.equal((await names('ristorenti'))[0], 'Guida della città');
    // Operators: a phrase, a field, an exclusion.
    assert.equal((await names('"consigli sulla città"'))[0], 'Guida della città');
    assert.ok((await names('tags:bank')).includes('Überweisungsagent'));
    // The skill that says "Indonesia" is left out; the agent's own name still matches.
    const cuaca = (await search({ query: 'cuaca -indonesia' })).results.find((h: WireJson) => h.name === 'Agen Cuaca');
    assert.deepEqual([cuaca?.match.type, cuaca?.matches], ['agent', undefined]);
    assert.ok(!(await names('cuaca -"agen cuaca"')).includes('Agen Cuaca'), 'an excluded phrase in the entry\'s own name leaves it out');
    // A malformed resultsPer is refused with a clear error.
    const task = await op(reader, { search: { query: 'weather', resultsPer: 'skill' } });
    assert.equal(stateOf(task), 'TASK_STATE_REJECTED');
  });

  test('C++, C# and F# are words: each finds what names it, not every "c"', async () => {
    // The symbols were separators and a lone letter no word: "C++" found nothing, "C++ code" every "code".
    const names = async (query: string) => (await search({ query })).results.map((h: WireJson) => h.name).sort();
    assert.deepEqual(await names('C++'), ['Kestrel C++ Mentor']);
    assert.deepEqual(await names('c#'), ['Kestrel Reviewer']);
    assert.deepEqual(await names('F#'), ['Kestrel Reviewer']);
    assert.deepEqual(await names('kestrel c++'), ['Kestrel C Toolsmith', 'Kestrel C++ Mentor', 'Kestrel Reviewer']);
    assert.equal((await search({ query: 'kestrel c++' })).results[0]?.name, 'Kestrel C++ Mentor');
    // The skill that says C# is left out; the entry's own name still matches "kestrel".
    const reviewer = (await search({ query: 'kestrel -c#' })).results.find((h: WireJson) => h.name === 'Kestrel Reviewer');
    assert.deepEqual([reviewer?.match.type, reviewer?.matches], ['agent', undefined]);
    assert.deepEqual(await names('tags:c++'), ['Kestrel C++ Mentor']);
    assert.deepEqual(await names('"c++ code"'), ['Kestrel C++ Mentor']);
    // The last word typed is a prefix only while the text ends right after it: a space after it
    // ends the word ("kestr " found every Kestrel, the search trimmed the space away).
    assert.deepEqual(await names('kestr'), ['Kestrel C Toolsmith', 'Kestrel C++ Mentor', 'Kestrel Reviewer']);
    assert.deepEqual(await names('kestr '), []);
    assert.deepEqual(await names('  kestr'), await names('kestr'), 'white space before the text means nothing');
  });

  test('a tag is matched with every word of it: tags:text-to-speech is not "text-speech", tags:it-support not "support"', async () => {
    // `tags:` dropped the tag's stop words and letters where the tags filter kept them:
    // tags:text-to-speech found the "text-speech" tag, tags:it-support every "support" tag.
    const bilbies = async (query: string, filter?: WireJson) => (await allHits({ query, ...(filter ? { filter } : {}) })).map((h) => h.name as string).filter((n) => n.startsWith('Bilby')).sort();
    for (const query of ['tags:text-to-speech', 'tags:"text to speech"', 'tag:Text_To_Speech']) assert.deepEqual(await bilbies(query), ['Bilby Voice'], query);
    assert.deepEqual(await bilbies('', { tags: ['text-to-speech'] }), ['Bilby Voice'], 'as the tags filter finds it');
    // A tag written as a tag is that tag: tags:text-speech found "text-to-speech" too (its phrase
    // left the stop word aside, as prose does), where the tags filter finds "text-speech" alone.
    for (const query of ['tags:text-speech', 'tags:"text speech"', 'tags:TextSpeech']) assert.deepEqual(await bilbies(query), ['Bilby Transcoder'], query);
    assert.deepEqual(await bilbies('', { tags: ['text-speech'] }), ['Bilby Transcoder'], 'as the tags filter finds it');
    for (const query of ['tags:it-support', 'tags:IT-Support', 'tags:"IT support"']) assert.deepEqual(await bilbies(query), ['Bilby Helpdesk'], query);
    assert.deepEqual(await bilbies('', { tags: ['it-support'] }), ['Bilby Helpdesk'], 'as the tags filter finds it');
    assert.deepEqual(await bilbies('tags:support'), ['Bilby Forum', 'Bilby Helpdesk'], 'a word of a tag still finds it');
    // In prose the stop word is dropped, as before: the phrase finds both spellings.
    assert.deepEqual(await bilbies('"text to speech"'), ['Bilby Transcoder', 'Bilby Voice']);
  });

  test('a word written in parts is found written as one: "email" finds "e-mail", "xray" "X-ray", "texttospeech" "TextToSpeech"', async () => {
    // Prose files "e-mail" as `mail` alone (single letters and stop words are dropped), so
    // "email" found it only as a typo of "mail" when "email" was rare, "emai" as typed not at
    // all, and "xray", "texttospeech" nothing. (Skills only: an entry's own text says "Quoll
    // Mailer", "mailer" a longer word of "mail".)
    for (const query of ['email', 'Email', 'e-mail', 'E-Mail', 'emai']) {
      assert.deepEqual(await quollSkills(query), ['Quoll Mailer: name,tags,description', 'Quoll Post: name,tags,description'], query);
    }
    assert.deepEqual((await quollSkills('tags:email')).map((h) => h.split(':')[0]), ['Quoll Mailer', 'Quoll Post']);
    for (const query of ['xray', 'x-ray', 'X-Ray']) assert.deepEqual(await quollSkills(query), ['Quoll Radiology: name'], query);
    for (const query of ['texttospeech', 'TextToSpeech', 'text-to-speech']) assert.deepEqual(await quollSkills(query), ['Quoll Radiology: description'], query);
    // Both words as one weigh as one exact word: the hits score alike.
    const [mailer, post] = (await allHits({ query: 'email', resultsPer: 'match' })).filter((h) => (h.name as string).startsWith('Quoll') && h.match.type === 'skill');
    assert.equal(mailer!.score, post!.score);
  });

  test('a hyphenated word is found as one word, with its forms, typos and as typed: "webhook" finds "web-hooks", "copil" "co-pilot"', async () => {
    // Its parts are words, and a query's "webhooks" or "copilot" was read as the two (addSplits),
    // but only as written: "webhook" (another form), "preprocess", "webhoo" and "copil" (typed so
    // far) and "copilott" (a typo) found nothing.
    for (const query of ['webhooks', 'webhook', 'webhoo']) assert.deepEqual(await quollSkills(query), ['Quoll Relay: name'], query);
    for (const query of ['copilot', 'copil', 'copilott', 'preprocess', 'preprocessing']) {
      assert.deepEqual(await quollSkills(query), ['Quoll Relay: description'], query);
    }
    // Its parts are still words of their own.
    for (const query of ['pilot', 'processing']) assert.deepEqual((await quollSkills(query)).map((h) => h.split(':')[0]), ['Quoll Relay'], query);
  });

  test('a quoted phrase with a word written in parts finds it written either way: "send email" and "send e-mail", "copilot for" and "co-pilot for"', async () => {
    // Prose reads "Send e-mail" as `send mail`: the phrase "send email" found only "Send email",
    // and "send e-mail" only "Send e-mail".
    for (const query of ['"send email"', '"send e-mail"', '"Send E-Mail"']) assert.deepEqual(await quollSkills(query), ['Quoll Mailer: name', 'Quoll Post: name'], query);
    for (const query of ['"sends an email"', '"sends an e-mail to anyone"']) {
      assert.deepEqual(await quollSkills(query), ['Quoll Mailer: description', 'Quoll Post: description'], query);
    }
    // A hyphenated word: the words kept for phrases are `co pilot` in one text and `copilot` in
    // the other, and a phrase found only the text writing it as the phrase did.
    const relays = async (query: string) => [...new Set((await allHits({ query, resultsPer: 'match' })).map((h) => h.name as string))].filter((n) => n === 'Quoll Relay' || n === 'Dibbler Drafts').sort();
    for (const query of ['"copilot for pre-processing"', '"co-pilot for preprocessing events"', '"Co-Pilot for pre-processing"', '"copilot for preprocessing"']) {
      assert.deepEqual(await relays(query), ['Dibbler Drafts', 'Quoll Relay'], query);
    }
  });

  test('a quoted phrase finds its words next to each other, in its order, not apart; a phrase left out leaves out only what says it', async () => {
    // Word pairs kept as 16-bit hashes found "pull request review" in a text saying "pull request"
    // and "request review" apart (and left it out of `pull -"pull request review"`), and pairs a
    // long tool description has apart ("manual mentioned", firecrawl_monitor_create).
    const dibbler = async (query: string) => (await allHits({ query, resultsPer: 'match' })).filter((h) => h.name === 'Dibbler Reviews').map((h) => h.match.fields);
    assert.deepEqual(await dibbler('"pull request review"'), []);
    assert.deepEqual(await dibbler('"pull request"'), [['description']]);
    assert.deepEqual(await dibbler('"request review"'), [['description']]);
    assert.deepEqual(await dibbler('pull -"pull request review"'), [['description']]);
    assert.deepEqual(await dibbler('pull -"pull request"'), []);
    assert.deepEqual((await allHits({ query: '"manual mentioned"', resultsPer: 'match' })).map((h) => h.match.id), []);
  });

  test('a quoted phrase weighs as the field that says it, not as the field of its rarer word', async () => {
    // "conflict" is rarer than "merge": the mediator, saying "merge conflict" in its description
    // and "conflict" in its name, was weighed as saying the phrase in its name too (and above the
    // solver, which does: name and description count more than a name alone).
    const hits = (await allHits({ query: '"merge conflict"', resultsPer: 'match' })).filter((h) => (h.name as string).startsWith('Quoll'));
    assert.deepEqual(hits.map((h) => [h.name, h.match.fields]), [['Quoll Solver', ['name']], ['Quoll Mediator', ['description']]]);
    // Unquoted, each word weighs as its own field, as before.
    const words = (await allHits({ query: 'merge conflict', resultsPer: 'match' })).filter((h) => (h.name as string).startsWith('Quoll'));
    assert.deepEqual(words.map((h) => h.name), ['Quoll Solver', 'Quoll Mediator']);
  });

  test('a name written in one word or in camelCase is found either way: "BilbyKit" and "bilbykit", "iOS" and "ios", "QK-9" and "qk9"', async () => {
    // "BilbyKit" was searched as "bilby" and "kit", which "bilbykit" has neither of; "iOS" was
    // filed and searched as "os"; "qk9" was one word, which "QK-9" (`qk 9`) has not.
    // The first two: "BilbyKit" is also "bilby" and "kit", which other names have.
    const firstTwo = async (query: string) => (await search({ query })).results.slice(0, 2).map((h: WireJson) => h.name as string).sort();
    for (const query of ['BilbyKit', 'bilbykit', 'Bilbykit', 'iOS', 'ios', 'qk9', 'QK-9', 'qk-9']) assert.deepEqual(await firstTwo(query), ['Wallaby Mobile', 'Wallaby Tablet'], query);
    const names = async (query: string) => (await allHits({ query })).map((h) => h.name as string);
    assert.ok(!(await names('os')).some((n) => n.startsWith('Wallaby')), '"os" is not "iOS"');
  });

  test('a query that is exactly a name finds what has that name first', async () => {
    // An entry that said the words more often (in its name and description, a skill's name,
    // tags and examples) ranked above the entry of that very name.
    const first = async (query: string, resultsPer = 'entry') => (await search({ query, resultsPer })).results[0];
    for (const query of ['Tally Ledger Agent', 'tally ledger agent', 'TALLY-LEDGER agent', 'TallyLedgerAgent', '"tally ledger" agent']) {
      assert.equal((await first(query))?.name, 'Tally Ledger Agent', query);
      assert.equal((await first(query, 'match'))?.name, 'Tally Ledger Agent', `${query} (results per match)`);
    }
    assert.equal((await first('Numbat'))?.name, 'Numbat');
    assert.equal((await first('numbat', 'match'))?.name, 'Numbat');
    // A letter dropped: "Numbt" is no word, a typo of "numbat" in every entry saying it, and the
    // hub, saying it more often, ranked above the entry of that name.
    for (const query of ['Numbt', 'numbatt']) {
      assert.equal((await first(query))?.name, 'Numbat', query);
      assert.equal((await first(query, 'match'))?.name, 'Numbat', `${query} (results per match)`);
    }
    // A letter joined by a hyphen, typed joined or not: "email sender" was no name, as the name's
    // words are `mail sender` (the letter dropped), and the hub saying "email sender" ranked first.
    for (const [name, queries] of [
      ['E-mail Sender', ['email sender', 'Email Sender', 'e-mail sender', 'E-Mail sender', 'e-mail-sender']],
      ['E-Mail-Versand', ['email versand', 'e-mail versand', 'E-Mail-Versand']],
    ] as const) {
      for (const query of queries) {
        assert.equal((await first(query))?.name, name, query);
        assert.equal((await first(query, 'match'))?.name, name, `${query} (results per match)`);
      }
    }
    // Hyphenated words typed as one: "copilot" and "texttospeech" were no name, as the names' words
    // are `co pilot` and `text speech`, and the hub saying them as one word ranked first.
    for (const [name, queries] of [
      ['Co-Pilot', ['copilot', 'Copilot', 'co-pilot', 'Co Pilot']],
      ['Text-to-Speech', ['texttospeech', 'TextToSpeech', 'text to speech', 'text-to-speech']],
    ] as const) {
      for (const query of queries) {
        assert.equal((await first(query))?.name, name, query);
        assert.equal((await first(query, 'match'))?.name, name, `${query} (results per match)`);
      }
    }
    // "E-Mail-Versand" is `emailversand` and `email` too: "email" as typed finds it (only as a typo of "mail" before).
    assert.ok((await allHits({ query: '"email"' })).some((h) => h.name === 'E-Mail-Versand'), '"email" finds E-Mail-Versand');
    // A skill's exact name is its entry's best match.
    const hub = await first('tally ledger agent routing');
    assert.deepEqual([hub?.name, hub?.match.id], ['Numbat Tally Ledger Agent Hub', 'tally']);
    // The words in another order, or fewer of them, are no name: the hub says them more often.
    assert.equal((await first('ledger tally'))?.name, 'Numbat Tally Ledger Agent Hub');
    assert.equal((await first('tally ledger'))?.name, 'Numbat Tally Ledger Agent Hub');
  });

  test("a query that is exactly a skill's or tool's name, however it is written, finds what has it first", async () => {
    // Skills' and tools' names had no exact-name term (only entries' own names did): the entries
    // saying the words in longer names and descriptions ranked first. Generated entries have a
    // create_pull_request too: every entry having the name comes before every other.
    const squeezed = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');
    for (const [queries, name, owner, other] of [
      [['create_pull_request', 'createPullRequest', 'create-pull-request', 'Create Pull Request', 'CREATE_PULL_REQUEST'], 'create_pull_request', 'potoroo-git', 'potoroo-forge'],
      [['search-flights', 'search_flights', 'searchFlights', 'search flights'], 'search-flights', 'potoroo-git', 'potoroo-forge'],
      [['bandicoot', 'Bandicoot'], 'bandicoot', 'potoroo-git', 'potoroo-forge'],
      // A letter in lower case is no word, but part of the name: "get_a_quote" is not "get_quote".
      [['get_a_quote', 'Get a quote'], 'get_a_quote', 'potoroo-git', 'potoroo-forge'],
      [['get_quote', 'getQuote'], 'get_quote', 'potoroo-forge', 'potoroo-git'],
      [['Currency Conversion', 'currency_conversion', 'currencyConversion', 'CURRENCY-CONVERSION'], 'Currency Conversion', 'Potoroo Exchange', 'Potoroo Currency Conversion Desk'],
      // A letter before a hyphen, typed joined: only an entry's name was named so ("email sender" is `mail sender`).
      [['email sender', 'Email Sender', 'e-mail sender'], 'E-mail Sender', 'potoroo-git', 'Email Sender Versand Hub'],
    ] as const) {
      for (const query of queries) {
        for (const resultsPer of ['entry', 'match']) {
          const hits: WireJson[] = (await search({ query, resultsPer, limit: 100 })).results;
          const named = hits.map((h) => squeezed(h.match.name) === squeezed(name));
          const at = `${query} (results per ${resultsPer}): ${hits.slice(0, 5).map((h) => `${h.name}: ${h.match.name}`).join(', ')}`;
          assert.ok(named[0] && !named.slice(named.indexOf(false)).includes(true), at);
          assert.ok(hits.some((h) => h.name === owner && named[hits.indexOf(h)]), at);
          assert.ok(hits.some((h) => h.name === other), at);
        }
      }
    }
    // The skill and the tool named "E-mail Sender" too, beside the agent of that name.
    const mailers = (await search({ query: 'email sender', resultsPer: 'match' })).results.slice(0, 3).map((h: WireJson) => `${h.name}: ${h.match.name}`);
    assert.deepEqual(mailers.sort(), ['E-mail Sender: E-mail Sender', 'Potoroo Exchange: E-mail Sender', 'potoroo-git: E-mail Sender']);
    // A letter dropped from a tool's one-word name: the tool so named first, as for the name typed right.
    for (const resultsPer of ['entry', 'match']) {
      const [hit] = (await search({ query: 'Bandicot', resultsPer })).results;
      assert.deepEqual([hit?.name, hit?.match.name], ['potoroo-git', 'bandicoot'], resultsPer);
    }
    // The words in another order are no name: what says them more often ranks above.
    const order = async (query: string, names: string[]) => (await allHits({ query })).map((h) => h.name as string).filter((n) => names.includes(n));
    assert.deepEqual(await order('pull request create', ['potoroo-git', 'potoroo-forge']), ['potoroo-forge', 'potoroo-git']);
    assert.deepEqual(await order('conversion currency', ['Potoroo Exchange', 'Potoroo Currency Conversion Desk']), ['Potoroo Currency Conversion Desk', 'Potoroo Exchange']);
  });

  test('a hit names its entry, what matched, its score and interfaces', async () => {
    const [hit] = (await search({ query: 'Überweisung ausführen' })).results;
    assert.equal(hit.name, 'Überweisungsagent');
    assert.equal(hit.kind, 'agent');
    assert.equal(hit.match.type, 'skill');
    assert.equal(hit.match.id, 'ueberweisung');
    assert.ok(hit.match.fields.includes('name'));
    assert.equal(typeof hit.score, 'number');
    assert.equal(hit.interfaces[0].url, 'https://de.example.org/a2a');
  });
});

describe('filters', () => {
  const skillsOf = (doc: WireJson): WireJson[] => doc.skills ?? [];
  /** The stored document, as `get` answers it (cards as they are; MCP as {mcpServer, toolspec}). */
  const fetched = new Map<string, WireJson>();
  const docOf = async (id: string): Promise<WireJson> => {
    if (!fetched.has(id)) fetched.set(id, resultOf(await op(reader, { get: { id } })).document);
    return fetched.get(id)!;
  };

  test('kind narrows to agents or MCP servers', async () => {
    for (const kind of ['agent', 'mcp-server']) {
      const hits = await allHits({ query: 'data', filter: { kind } });
      assert.ok(hits.length > 0);
      assert.ok(hits.every((h) => h.kind === kind));
    }
  });

  test('tags narrow to skills that carry the tag', async () => {
    const hits = await allHits({ query: '', filter: { tags: ['finance'] } });
    assert.ok(hits.length > 0);
    for (const h of hits) {
      const skill = skillsOf(await docOf(h.id)).find((s) => s.id === h.match.id);
      assert.ok(skill, `hit ${h.name} / ${h.match.id} is not a known skill`);
      assert.ok(skill.tags.map((t: string) => t.toLowerCase()).includes('finance'));
    }
  });

  test('a filter value of only white space is refused, naming it (it was dropped, and the search matched every entry)', async () => {
    for (const [filter, path] of [
      [{ tags: [' '] }, '/filter/tags/0'],
      [{ tags: ['finance', '\t'] }, '/filter/tags/1'],
      [{ inputModes: ['  '] }, '/filter/inputModes/0'],
      [{ owner: '  ' }, '/filter/owner'],
      [{ protocolVersion: ' ' }, '/filter/protocolVersion'],
    ] as const) {
      const refused = errorOf(await op(reader, { search: { query: '', filter } }));
      assert.equal(refused.code, 'BAD_REQUEST', JSON.stringify(filter));
      assert.match(refused.message, /must not be blank/, JSON.stringify(filter));
      assert.ok(refused.details.some((d: WireJson) => String(d.path).endsWith(path)), `${JSON.stringify(refused.details)} names ${path}`);
    }
    // list's owner too (it answered no entries, as if no one had registered any).
    const listed = errorOf(await op(reader, { list: { filter: { owner: ' ' } } }));
    assert.equal(listed.code, 'BAD_REQUEST');
    assert.match(listed.message, /\/list\/filter\/owner: must not be blank \(only white space\)/);
  });

  test('an empty filter value is told once, as empty, on A2A and ARD (it was also told "only white space", at the same path)', async () => {
    for (const [filter, path] of [
      [{ tags: [''] }, '/filter/tags/0'],
      [{ owner: '' }, '/filter/owner'],
      [{ protocolVersion: '' }, '/filter/protocolVersion'],
    ] as const) {
      const refused = errorOf(await op(reader, { search: { query: 'x', filter } }));
      assert.deepEqual(
        refused.details.map((d: WireJson) => String(d.path).replace(/^.*\/search/, '')),
        [path],
        `one finding for ${JSON.stringify(filter)}: ${JSON.stringify(refused.details)}`,
      );
      assert.match(refused.message, /must not be empty/, JSON.stringify(filter));
      assert.doesNotMatch(refused.message, /white space/, JSON.stringify(filter));
      const ard = await fetch(`${registry.url}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: { text: 'x', filter } }) });
      assert.equal(ard.status, 400, `ARD ${JSON.stringify(filter)}`);
      const said = ((await ard.json()) as WireJson).message;
      assert.match(said, /must not be empty: give the value, or leave the key out/, `ARD ${JSON.stringify(filter)}`);
      assert.doesNotMatch(said, /white space/, `ARD ${JSON.stringify(filter)}`);
    }
  });

  test('streaming, protocolBinding and protocolVersion narrow by the card', async () => {
    const streaming = await allHits({ query: '', filter: { streaming: true, kind: 'agent' } });
    assert.ok(streaming.length > 0);
    for (const h of streaming) assert.equal((await docOf(h.id)).capabilities?.streaming, true, h.name);
    const grpc = await allHits({ query: '', filter: { protocolBinding: 'GRPC' } });
    for (const h of grpc) assert.ok(h.interfaces.some((i: WireJson) => i.protocolBinding === 'GRPC'));
    const v03 = await allHits({ query: '', filter: { protocolVersion: '0.3' } });
    for (const h of v03) assert.ok(h.interfaces.some((i: WireJson) => String(i.protocolVersion).startsWith('0.3')));
  });

  test('an asked version with zero parts added matches the version an interface declares', async () => {
    // "0.3.0" missed a v1.0 card's gRPC interface declaring "0.3", and "1.0.0" every "1.0" interface.
    const card = {
      ...v1Card('Okapi Relay', 'https://okapi.example.org/a2a'),
      supportedInterfaces: [
        { url: 'https://okapi.example.org/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'https://okapi.example.org/grpc', protocolBinding: 'GRPC', protocolVersion: '0.3' },
      ],
    };
    const { id } = resultOf(await op(writer, { register: { agentCard: card } }));
    const found = async (filter: WireJson) => (await search({ query: 'okapi', filter })).results.some((h: WireJson) => h.id === id);
    assert.equal(await found({ protocolVersion: '0.3.0' }), true);
    assert.equal(await found({ protocolBinding: 'GRPC', protocolVersion: '0.3.0' }), true);
    assert.equal(await found({ protocolVersion: '1.0.0' }), true);
    assert.equal(await found({ protocolBinding: 'GRPC', protocolVersion: '1.0.0' }), false);
    assert.equal(await found({ protocolVersion: '1.0.1' }), false);
    assert.equal(await found({ protocolVersion: '0.30' }), false);
  });

  test('input and output modes match the skill or the card defaults', async () => {
    const hits = await allHits({ query: '', filter: { inputModes: ['application/pdf'] } });
    assert.ok(hits.length > 0);
    for (const h of hits) {
      const doc = await docOf(h.id);
      const skill = skillsOf(doc).find((s) => s.id === h.match.id);
      const modes: string[] = skill?.inputModes ?? doc.defaultInputModes ?? [];
      assert.ok(modes.some((m) => m === 'application/pdf' || m === 'application/*' || m === '*/*'), `${h.name}: ${modes}`);
    }
  });

  test('MCP hints apply the MCP defaults: readOnly false, destructive true when absent', async () => {
    const readOnly = await allHits({ query: '', filter: { readOnly: true } });
    const notDestructive = await allHits({ query: '', filter: { destructive: false } });
    assert.ok(readOnly.length > 0);
    const toolOf = async (h: WireJson) => ((await docOf(h.id)).toolspec.tools as WireJson[]).find((t) => t.name === h.match.id);
    for (const h of readOnly) {
      assert.equal(h.kind, 'mcp-server');
      assert.equal((await toolOf(h))?.annotations?.readOnlyHint, true, `${h.name}/${h.match.id}`);
    }
    for (const h of notDestructive) {
      const a = (await toolOf(h))?.annotations;
      assert.ok(a?.destructiveHint === false || a?.readOnlyHint === true, `${h.name}/${h.match.id}`);
    }
    const destructive = await allHits({ query: '', filter: { destructive: true } });
    let absent = 0;
    for (const h of destructive) {
      const a = (await toolOf(h))?.annotations;
      assert.notEqual(a?.destructiveHint, false, `${h.name}/${h.match.id}`);
      assert.notEqual(a?.readOnlyHint, true, `${h.name}/${h.match.id}`);
      if (a?.destructiveHint === undefined) absent++;
    }
    assert.ok(absent > 0, 'an absent hint counts as destructive');
  });

  test('a read-only tool is neither destructive nor repeated-call unsafe, whatever its other hints', async () => {
    // MCP: destructiveHint and idempotentHint mean something only when readOnlyHint is false; a
    // read-only tool without destructiveHint: false counted as destructive by the default.
    const tools = [
      { name: 'peek_plain', description: 'Kestrelwing peek.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
      { name: 'peek_contradicting', description: 'Kestrelwing peek.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true, destructiveHint: true, idempotentHint: false } },
      { name: 'wipe', description: 'Kestrelwing wipe.', inputSchema: { type: 'object' } },
      { name: 'append', description: 'Kestrelwing append.', inputSchema: { type: 'object' }, annotations: { destructiveHint: false, idempotentHint: true } },
    ];
    resultOf(await op(writer, { register: { mcpServer: mcpServer('kestrelwing', 'https://mcp.example.org/kestrelwing'), toolspec: { tools } } }));
    const tools_ = async (filter: WireJson) =>
      (await search({ query: 'kestrelwing', filter, resultsPer: 'match', limit: 100 })).results.map((h: WireJson) => h.match.id).sort();
    assert.deepEqual(await tools_({ destructive: false }), ['append', 'peek_contradicting', 'peek_plain']);
    assert.deepEqual(await tools_({ destructive: true }), ['wipe']);
    assert.deepEqual(await tools_({ idempotent: true }), ['append', 'peek_contradicting', 'peek_plain']);
    assert.deepEqual(await tools_({ idempotent: false }), ['wipe']);
    assert.deepEqual(await tools_({ readOnly: true, destructive: true }), []);
  });
});

describe('paging and streaming', () => {
  test('a page token asked with another limit or resultsPer is refused naming what must stay the same', async () => {
    const first = await search({ query: 'data', limit: 3 });
    assert.ok(first.nextPageToken);
    for (const changed of [{ limit: 4 }, { limit: 3, resultsPer: 'match' }, { limit: 3, query: 'files' }]) {
      const refused = errorOf(await op(reader, { search: { query: 'data', pageToken: first.nextPageToken, ...changed } }));
      assert.equal(refused.code, 'BAD_REQUEST');
      assert.match(refused.message, /send the same query, filter, limit and resultsPer as the page it came from/, JSON.stringify(changed));
      // Where the message has it, as every other finding of the arguments (it said /pageToken).
      assert.deepEqual(refused.details.map((d: WireJson) => d.path), ['/parts/0/data/search/pageToken']);
    }
    // Issued for this search with another filter kind: the finding says which (MCP's search tools,
    // which each add their kind, tell from it whose the token is).
    const ofKind = await search({ query: 'data', limit: 1, filter: { kind: 'agent' } });
    const otherKind = errorOf(await op(reader, { search: { query: 'data', limit: 1, filter: { kind: 'mcp-server' }, pageToken: ofKind.nextPageToken } }));
    assert.match(otherKind.message, /send the same query, filter, limit and resultsPer as the page it came from/);
    assert.deepEqual(otherKind.details, [{ path: '/parts/0/data/search/pageToken', message: 'issued for this search with filter kind "agent"', rule: 'page-token-other-query' }]);
    // The same filter with its keys in another order is the same search (a client's JSON library
    // need not keep the order it was given): its token continues it, in search and in list.
    const inOrder = await search({ query: 'data', limit: 1, filter: { kind: 'agent', verified: false } });
    const reordered = await search({ query: 'data', limit: 1, filter: { verified: false, kind: 'agent' }, pageToken: inOrder.nextPageToken });
    assert.equal(reordered.results.length, 1);
    assert.notEqual(reordered.results[0].id, inOrder.results[0].id);
    const listedInOrder = resultOf(await op(reader, { list: { pageSize: 1, filter: { kind: 'agent', verified: false } } }));
    const listedReordered = resultOf(await op(reader, { list: { pageSize: 1, filter: { verified: false, kind: 'agent' }, pageToken: listedInOrder.nextPageToken } }));
    assert.notEqual(listedReordered.entries[0].id, listedInOrder.entries[0].id);
    const made = errorOf(await op(reader, { search: { query: 'data', pageToken: 'garbage' } }));
    assert.match(made.message, /^The pageToken is not valid/);
    assert.deepEqual(made.details.map((d: WireJson) => d.path), ['/parts/0/data/search/pageToken']);
    const listed = resultOf(await op(reader, { list: { pageSize: 1 } }));
    const otherList = errorOf(await op(reader, { list: { pageSize: 1, filter: { kind: 'mcp-server' }, pageToken: listed.nextPageToken } }));
    assert.deepEqual(otherList.details.map((d: WireJson) => d.path), ['/parts/0/data/list/pageToken']);
    // The operation in a later part is named there.
    const later = errorOf(await send(reader, [textPart('the next page'), dataPart({ list: { pageToken: 'garbage' } })]));
    assert.deepEqual(later.details.map((d: WireJson) => d.path), ['/parts/1/data/list/pageToken']);
  });

  test('a search\'s page token sent to list, or a list\'s to search, is refused saying whose it is', async () => {
    // Both said "belongs to another query: send the same filter as the page it came from", which no filter could mend.
    const searched = await search({ query: 'data', limit: 3 });
    const toList = errorOf(await op(reader, { list: { pageSize: 3, pageToken: searched.nextPageToken } }));
    assert.equal(toList.code, 'BAD_REQUEST');
    assert.match(toList.message, /^The pageToken is a search's nextPageToken, not a list's: send it with search, the operation whose answer gave it, or leave it out/);
    assert.deepEqual(toList.details.map((d: WireJson) => [d.path, d.rule]), [['/parts/0/data/list/pageToken', 'page-token-other-operation']]);
    const listed = resultOf(await op(reader, { list: { pageSize: 1 } }));
    const toSearch = errorOf(await op(reader, { search: { query: 'data', pageToken: listed.nextPageToken } }));
    assert.match(toSearch.message, /^The pageToken is a list's nextPageToken, not a search's: send it with list, the operation whose answer gave it/);
    assert.deepEqual(toSearch.details.map((d: WireJson) => d.path), ['/parts/0/data/search/pageToken']);
  });

  test('a page token that cannot be read is refused as one not issued, with its detail, on JSON-RPC and HTTP+JSON', async () => {
    // Signed, yet no page: the secret lets this test sign what the registry never would.
    const key = createHash('sha256').update(PAGE_TOKEN_SECRET).digest();
    const signed = (content: unknown): string => {
      const payload = Buffer.from(typeof content === 'string' ? content : JSON.stringify(content)).toString('base64url');
      return `${payload}.${createHmac('sha256', key).update(payload).digest('base64url').slice(0, 22)}`;
    };
    const searched = await search({ query: 'data', limit: 1 });
    const listed = resultOf(await op(reader, { list: { pageSize: 1 } }));
    const fingerprintOf = (token: string): string => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).f;
    const rest = await sdkClient(registry.url, { binding: 'HTTP+JSON' });
    const shapes: [operation: 'search' | 'list', token: string, was: string][] = [
      // Signature characters outside base64url: timingSafeEqual threw on their longer UTF-8 (INTERNAL).
      ['list', `${listed.nextPageToken.slice(0, -1)}é`, 'internal error'],
      ['search', `${searched.nextPageToken.slice(0, -2)}\u{1F600}`, 'internal error'],
      // A position the store never handed out (INTERNAL), a search cursor that does not decode (no details).
      ['list', signed({ p: 'garbage', f: fingerprintOf(listed.nextPageToken), o: 'list' }), 'internal error'],
      ['search', signed({ p: 'garbage', f: fingerprintOf(searched.nextPageToken), o: 'search' }), 'no details'],
      // JSON that is no page: "belongs to another query".
      ['list', signed(null), 'another query'],
      ['search', signed([1]), 'another query'],
      ['list', signed({ p: 7, f: fingerprintOf(listed.nextPageToken) }), 'another query'],
      ['search', signed('not json'), 'refused so already'],
    ];
    for (const [operation, pageToken, was] of shapes) {
      const args = operation === 'search' ? { query: 'data', limit: 1, pageToken } : { pageSize: 1, pageToken };
      for (const client of [reader, rest]) {
        const refused = errorOf(await op(client, { [operation]: args }));
        assert.match(refused.message, /^The pageToken is not valid: pass the nextPageToken of the previous page unchanged/, `${operation} ${pageToken} (was: ${was})`);
        assert.deepEqual(refused.details, [{ path: `/parts/0/data/${operation}/pageToken`, message: 'not a token this registry issued', rule: 'page-token-invalid' }]);
      }
    }
    // A most-recently-changed position past 9999-12-31, which no write has: PostgreSQL cannot
    // read its time (INTERNAL there), SQLite answered an empty page. Refused alike on both.
    const byChange = resultOf(await op(reader, { list: { pageSize: 1, orderBy: 'updatedAt' } }));
    const issued = JSON.parse(Buffer.from(byChange.nextPageToken.split('.')[0]!, 'base64url').toString());
    const farOff = signed({ ...issued, p: Buffer.from('v2.999999999999999.1').toString('base64url') });
    const refused = errorOf(await op(reader, { list: { pageSize: 1, orderBy: 'updatedAt', pageToken: farOff } }));
    assert.deepEqual(refused.details, [{ path: '/parts/0/data/list/pageToken', message: 'not a token this registry issued', rule: 'page-token-invalid' }]);
  });

  test('an empty or overlong page token is refused as one not issued (page-token-invalid), saying what to send; it was a schema error, "Too small"', async () => {
    for (const [operation, pageToken, why] of [['search', '', 'it is empty'], ['list', 'a'.repeat(513), 'it is longer than 512 characters, which no page token is']] as const) {
      const refused = errorOf(await op(reader, { [operation]: { pageToken } }));
      const advice = 'Pass the nextPageToken of the previous page unchanged, or leave it out for the first page.';
      assert.deepEqual(refused.details, [{ path: `/parts/0/data/${operation}/pageToken`, message: `not a token this registry issued: ${why}`, hint: advice, rule: 'page-token-invalid' }]);
      assert.match(refused.message, /\(Pass the nextPageToken of the previous page unchanged, or leave it out for the first page\)\.$/);
    }
  });

  test('a page token starts after the last hit shown when entries are added or removed between pages', async () => {
    // Tokens held an offset alone: an entry registered above the page boundary showed the page's
    // last hit again on the next page, one removed above it skipped the next page's first hit.
    const card = (n: number) => ({
      ...v1Card(`Pangolin ${n}`, `https://pangolin-${n}.example.org/a2a`),
      skills: [{ id: 'q', name: 'Hop', description: 'Hops about.', tags: ['pangolinline'] }],
    });
    const register = async (n: number): Promise<string> => resultOf(await op(writer, { register: { agentCard: card(n) } })).id;
    const ids: string[] = [];
    for (let n = 1; n <= 6; n++) ids.push(await register(n));
    for (const resultsPer of ['entry', 'match'] as const) {
      const ask = { query: '', filter: { tags: ['pangolinline'] }, limit: 2, resultsPer };
      const first = await search(ask);
      assert.equal(first.results.length, 2);
      const seen: string[] = first.results.map((h: WireJson) => h.id);
      // Newest first: the new entry comes before the boundary, and so does the removed one.
      const added = await register(resultsPer === 'entry' ? 7 : 8);
      let page = await search({ ...ask, pageToken: first.nextPageToken });
      seen.push(...page.results.map((h: WireJson) => h.id));
      resultOf(await op(writer, { unregister: { id: seen[0] } }));
      while (page.nextPageToken) {
        page = await search({ ...ask, pageToken: page.nextPageToken });
        seen.push(...page.results.map((h: WireJson) => h.id));
      }
      assert.equal(new Set(seen).size, seen.length, `no hit twice: ${seen}`);
      const present = ids.filter((id) => id !== seen[0]);
      for (const id of present) assert.ok(seen.includes(id), `${id} was skipped (${resultsPer})`);
      assert.ok(!seen.includes(added), 'the entry added above the boundary is not on the later pages');
      ids.splice(ids.indexOf(seen[0]), 1);
    }
  });

  test('a page token continues where it was when the page shown is removed, or its last hit updated, before the next page', async () => {
    // Tokens marked the page's last two hits, and fell back to the offset without them: removing
    // what a page showed (reviewing and deleting) skipped as many hits on the next page, and an
    // update moving the last hit shown to the top (newest first) started the next page after it
    // there, showing the page again.
    const card = (n: number, description = 'Digs about.') => ({
      ...v1Card(`Aardvark ${n}`, `https://aardvark-${n}.example.org/a2a`),
      skills: [{ id: 'q', name: 'Dig', description, tags: ['aardvarkline'] }],
    });
    const register = async (n: number, description?: string): Promise<string> => resultOf(await op(writer, { register: { agentCard: card(n, description) } })).id;
    for (let n = 1; n <= 30; n++) await register(n);
    const names = (page: WireJson): string[] => page.results.map((h: WireJson) => h.name);
    for (const resultsPer of ['entry', 'match'] as const) {
      const ask = { query: '', filter: { tags: ['aardvarkline'] }, limit: 12, resultsPer };
      const first = await search(ask);
      const following = names(await search({ ...ask, limit: 14 })).slice(12);
      for (const hit of first.results) resultOf(await op(writer, { unregister: { id: hit.id } }));
      const next = await search({ ...ask, pageToken: first.nextPageToken });
      assert.deepEqual(names(next).slice(0, 2), following, `${resultsPer}: the whole page removed`);
    }
    const ask = { query: '', filter: { tags: ['aardvarkline'] }, limit: 2 };
    const first = await search(ask);
    const shown = names(first);
    const rest = names(await search({ ...ask, limit: 100 })).slice(2);
    await register(Number(shown[1]!.split(' ')[1]), 'Digs about, faster.');
    const next = await search({ ...ask, pageToken: first.nextPageToken });
    assert.deepEqual(names(next), rest.slice(0, 2), 'the last hit shown updated (now first)');
  });

  test('an entry updated between pages, its relevance unchanged, keeps its place: every entry once, with text and without', async () => {
    // Ties in relevance were broken, and a search without text ordered, by the last change
    // (updatedAt) newest first: an entry not shown yet whose version changed moved in front of
    // the token and was never shown. Both now order by registration, newest first, as list does.
    const card = (n: number, version: string) => ({
      ...v1Card(`Tapir ${n}`, `https://tapir-${n}.example.org/a2a`),
      version,
      skills: [{ id: 's', name: 'Probe', description: 'Probes.', tags: ['tapirline'] }],
    });
    const register = async (n: number, version: string): Promise<string> => resultOf(await op(writer, { register: { agentCard: card(n, version) } })).id;
    const ids: string[] = [];
    for (let n = 0; n < 10; n++) ids.push(await register(n, '1.0.0'));
    let release = 0;
    for (const query of ['tapirline', '']) {
      const ask = { query, filter: { tags: ['tapirline'] }, limit: 3 };
      let page = await search(ask);
      // Every hit ties: the same score for each, so only the tie-break orders them.
      assert.equal(new Set(page.results.map((h: WireJson) => h.score)).size, 1, JSON.stringify(page.results));
      const seen: string[] = page.results.map((h: WireJson) => h.id);
      while (page.nextPageToken) {
        // Before each later page, the version (nothing a search matches) of an entry not shown
        // yet, and of one shown already, changes.
        release++;
        const unseen = ids.find((id) => !seen.includes(id));
        if (unseen !== undefined) await register(ids.indexOf(unseen), `1.0.${release}`);
        await register(ids.indexOf(seen.at(-1)!), `1.0.${release}`);
        page = await search({ ...ask, pageToken: page.nextPageToken });
        seen.push(...page.results.map((h: WireJson) => h.id));
      }
      assert.deepEqual([...seen].sort(), [...ids].sort(), `${JSON.stringify(query)}: each entry exactly once`);
      // Newest registered first, as list orders: the updates moved nothing.
      assert.deepEqual(seen, [...ids].reverse(), JSON.stringify(query));
    }
    for (const id of ids) resultOf(await op(writer, { unregister: { id } }));
  });

  test('entries registered at once (some in one millisecond) come as list shows them, newest registered first, with text and without; an update moves none', async () => {
    // Within one millisecond the index ordered ties by id, whose bits there are random (UUIDv7),
    // where list orders by registration (list_seq). How many share one here depends on the
    // machine; import.test and index-snapshot.test store whole batches within one.
    const bob = await sdkClient(registry.url, { token: TOKENS.bob });
    const card = (n: number, version: string) => ({
      ...v1Card(`Wallaby ${n}`, `https://wallaby-${n}.example.org/a2a`),
      version,
      skills: [{ id: 's', name: 'Hop', description: 'Hops.', tags: ['wallabyline'] }],
    });
    const register = async (n: number, version: string): Promise<string> => resultOf(await op(bob, { register: { agentCard: card(n, version) } })).id;
    const ids = await Promise.all(Array.from({ length: 40 }, (_, n) => register(n, '1.0.0')));
    await register(5, '1.0.1');
    const listed = (resultOf(await op(bob, { list: { filter: { owner: 'bob' }, pageSize: 100 } })).entries as WireJson[]).map((e) => e.id);
    assert.deepEqual([...listed].sort(), [...ids].sort());
    for (const query of ['', 'wallabyline']) {
      const hits = await allHits({ query, filter: { owner: 'bob' } });
      assert.equal(new Set(hits.map((h) => h.score)).size, 1, 'every hit ties');
      assert.deepEqual(hits.map((h) => h.id), listed, JSON.stringify(query));
    }
    for (const id of ids) resultOf(await op(bob, { unregister: { id } }));
  });

  test('a page ending on two skills of one id (a duplicate-skill-id warning) does not show the last one again', async () => {
    const card = (n: number, skills: WireJson[]) => ({ ...v1Card(`Okapi ${n}`, `https://okapi-${n}.example.org/a2a`), skills });
    const skill = (id: string, name: string) => ({ id, name, description: 'Browses.', tags: ['okapiline'] });
    resultOf(await op(writer, { register: { agentCard: card(1, [skill('a', 'Older one'), skill('b', 'Older two')]) } }));
    // Newest, so its skills come first: the first page of three ends on the second "dup".
    resultOf(await op(writer, { register: { agentCard: card(2, [skill('solo', 'Solo'), skill('dup', 'Dup one'), skill('dup', 'Dup two')]) } }));
    const ask = { query: '', filter: { tags: ['okapiline'] }, limit: 3, resultsPer: 'match' };
    const seen: string[] = [];
    let page = await search(ask);
    seen.push(...page.results.map((h: WireJson) => h.match.name));
    while (page.nextPageToken) {
      page = await search({ ...ask, pageToken: page.nextPageToken });
      seen.push(...page.results.map((h: WireJson) => h.match.name));
    }
    assert.deepEqual(seen, ['Solo', 'Dup one', 'Dup two', 'Older one', 'Older two']);
  });

  test('paging returns every hit exactly once', async () => {
    const all = await search({ query: 'data', limit: 100 });
    const seen: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await search({ query: 'data', limit: 7, ...(pageToken ? { pageToken } : {}) });
      assert.equal(page.total, all.total);
      seen.push(...page.results.map((h: WireJson) => `${h.id}/${h.match.type}/${h.match.id ?? ''}`));
      pageToken = page.nextPageToken;
    } while (pageToken);
    assert.equal(seen.length, all.total);
    assert.equal(new Set(seen).size, seen.length);
  });

  test('streaming delivers the same hits as the blocking call, in chunks', async () => {
    const query = { search: { query: 'weather forecast', limit: 30 } };
    const blocking = resultOf(await op(reader, query));
    const events = await stream(reader, [dataPart(query)]);
    const chunks = events.filter((e) => e.artifactUpdate).map((e) => e.artifactUpdate);
    assert.ok(chunks.length > 1, 'more than one chunk');
    assert.equal(chunks[0].append ?? false, false);
    assert.ok(chunks.slice(1).every((c) => c.append === true));
    assert.equal(chunks.at(-1).lastChunk, true);
    assert.ok(chunks.every((c) => c.artifact.name === 'search-results' && c.artifact.artifactId === chunks[0].artifact.artifactId));
    const streamed = chunks.flatMap((c) => c.artifact.parts.find((p: WireJson) => p.data).data.results);
    assert.deepEqual(streamed, blocking.results);
    assert.equal(chunks.at(-1).artifact.parts.find((p: WireJson) => p.data).data.total, blocking.total);
    assert.equal(events.at(-1)!.statusUpdate.status.state, 'TASK_STATE_COMPLETED');
  });

  test('the query limit counts characters as code points, as the MCP tools\' maxLength does: an emoji is one', async () => {
    // "🌤".repeat(600) was refused as 1,200 characters (UTF-16 units) against the limit of 1,000.
    for (const query of ['🌤'.repeat(600), '🌤'.repeat(1000), `${'天'.repeat(999)}🌤`]) {
      assert.equal(typeof (await search({ query })).total, 'number', `${query.length} units`);
      const ard = await fetch(`${registry.url}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: { text: query } }) });
      assert.equal(ard.status, 200, `ARD, ${query.length} units`);
    }
    const tooLong = errorOf(await op(reader, { search: { query: '🌤'.repeat(1001) } }));
    assert.match(tooLong.message, /\/parts\/0\/data\/search\/query: the query is 1001 characters; the limit is 1000/);
    // Its finding says it in the same words, and what to do (it said zod's "Too big: expected string to have <=1000 characters").
    const finding = { path: '/parts/0/data/search/query', message: 'the query is 1001 characters; the limit is 1000 (REGISTRY_MAX_QUERY_CHARS)', hint: 'Shorten it to at most 1000 characters; an emoji counts as one.' };
    assert.deepEqual(tooLong.details, [finding]);
    const ard = await fetch(`${registry.url}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: { text: '🌤'.repeat(1001) } }) });
    assert.equal(ard.status, 400);
    const ardSaid = (await ard.json()) as WireJson;
    assert.match(ardSaid.message, /the query is 1001 characters; the limit is 1000/);
    assert.deepEqual(ardSaid.details, [{ ...finding, path: '/query/text' }]);
  });

  test('filter values count characters as code points, as the published maxLength does: 200 emoji are 200', async () => {
    // 101 emoji (202 UTF-16 units) were refused as longer than 200 characters, on A2A and ARD alike.
    const ardSearch = (filter: WireJson) =>
      fetch(`${registry.url}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: { text: 'data', filter } }) });
    assert.ok((await search({ query: 'data' })).total > 0);
    // Taken and applied: no entry has such a tag or owner (the search's own bound dropped them, and matched every entry).
    for (const filter of [{ tags: ['🌤'.repeat(200)] }, { owner: '🌤'.repeat(200) }, { protocolVersion: '🌤'.repeat(20) }]) {
      assert.equal((await search({ query: 'data', filter })).total, 0, JSON.stringify(filter));
      const ard = await ardSearch(filter);
      assert.equal(ard.status, 200, `ARD ${JSON.stringify(filter)}`);
      assert.deepEqual(((await ard.json()) as WireJson).results, [], `ARD ${JSON.stringify(filter)}`);
    }
    const tooLong = errorOf(await op(reader, { search: { query: 'x', filter: { tags: ['🌤'.repeat(201)] } } }));
    assert.match(tooLong.message, /value 0 of "tags" must be a string of 1 to 200 characters; got one longer/);
    const ard = await ardSearch({ tags: ['🌤'.repeat(201)] });
    assert.equal(ard.status, 400);
    assert.match(((await ard.json()) as WireJson).message, /\/query\/filter\/tags\/0: at most 200 characters/);
  });

  test('a text-only message is a search for that text', async () => {
    const task = await send(reader, [textPart('Überweisung')]);
    assert.equal(resultOf(task).results[0].name, 'Überweisungsagent');
    assert.ok(task.artifacts[0].parts.some((p: WireJson) => typeof p.text === 'string' && p.text.includes('Überweisungsagent')));
  });

  test('a query of no word search looks for says so, in the page and its text (it said only "No matches.")', async () => {
    const task = await send(reader, [textPart('the')]);
    const page = resultOf(task);
    assert.equal(page.total, 0);
    assert.match(page.reason, /^the query has no word search looks for: "the" is only words too common or too short/);
    assert.ok(task.artifacts[0].parts.some((p: WireJson) => typeof p.text === 'string' && p.text.startsWith('No matches: the query has no word search looks for: "the"')));
    assert.equal((await search({ query: 'zzqxv' })).reason, undefined, 'a word no entry has: no reason given');
  });

  test('a filter no entry can pass says which key left nothing, in the page and its text, as a query of no searchable word does (it said only "No matches.")', async () => {
    const task = await send(reader, [dataPart({ search: { query: 'agent', filter: { owner: 'nobody-at-all' } } })]);
    const page = resultOf(task);
    assert.equal(page.total, 0);
    assert.equal(page.reason, 'the filter leaves no entry: no entry belongs to the "owner" "nobody-at-all"; remove or change that key of the filter');
    assert.ok(task.artifacts[0].parts.some((p: WireJson) => typeof p.text === 'string' && p.text.startsWith('No matches: the filter leaves no entry: no entry belongs')));
    const reasonOf = async (filter: WireJson, query = '') => (await search({ query, filter })).reason;
    assert.equal(await reasonOf({ tags: ['zzqx-no-such-tag'] }), 'the filter leaves no entry: no skill has the tag "zzqx-no-such-tag" ("tags"); remove or change that key of the filter');
    assert.equal(await reasonOf({ inputModes: ['zzqx/none'] }, 'agent'), 'the filter leaves no entry: no agent declares a mode that "zzqx/none" accepts ("inputModes"); remove or change that key of the filter');
    // Only the values the filter kept are quoted, and counted for "the tag" or "any of the tags".
    // (A lone combining accent is a tag of no letters; ";q=1" a mode of no type.)
    assert.equal(await reasonOf({ tags: ['\u0301', 'zzqx-no-such-tag'] }), 'the filter leaves no entry: no skill has the tag "zzqx-no-such-tag" ("tags"); remove or change that key of the filter');
    assert.equal(await reasonOf({ inputModes: [';q=1', 'zzqx/none', 'zzqx/nix'] }, 'agent'), 'the filter leaves no entry: no agent declares a mode any of "zzqx/none", "zzqx/nix" accept ("inputModes"); remove or change that key of the filter');
    assert.match((await reasonOf({ kind: 'agent', readOnly: true }))!, /^the filter leaves no entry: "readOnly", "destructive", "idempotent" or "openWorld" ask for an MCP server's tools, and "kind" is "agent"; /);
    assert.match((await reasonOf({ tags: ['weather'], readOnly: true }))!, /^the filter leaves no entry: "readOnly", .* ask for an MCP server's tools and "tags", "inputModes" or "outputModes" for an agent's skills, which no entry has both of; /);
    // What no MCP server has, asked of MCP servers (their kind, or tool hints): it answered no entry without a word.
    assert.equal(await reasonOf({ kind: 'mcp-server', streaming: true }), 'the filter leaves no entry: "streaming" is true and "kind" is "mcp-server" (MCP servers do not stream); remove or change that key of the filter');
    assert.match((await reasonOf({ readOnly: true, verified: true }, 'file'))!, /^the filter leaves no entry: "verified" is true and "readOnly", .* ask for an MCP server's tools \(MCP servers are never verified: only an agent's card carries signatures\); /);
    // Not asked of MCP servers alone: MCP servers pass "streaming": false and "verified": false.
    assert.ok((await search({ query: '', filter: { kind: 'mcp-server', streaming: false, verified: false } })).total > 0);
    // A filter that entries pass, none of them with the query's words: no reason, as for a word no entry has.
    assert.equal(await reasonOf({ kind: 'agent' }, 'zzqxv'), undefined);
  });
});

describe('freshness', () => {
  test('a just-registered agent is found at once; an unregistered one is gone at once', async () => {
    const { id } = resultOf(await op(writer, { register: { agentCard: v1Card('Quokka Scheduler', 'https://quokka.example.org/a2a') } }));
    assert.equal((await search({ query: 'quokka' })).results[0]?.id, id);
    resultOf(await op(writer, { unregister: { id } }));
    assert.equal((await search({ query: 'quokka' })).total, 0);
  });

  test('a search asked again is answered from the search cache until any change, which it then sees', async () => {
    const found = () => metricValue(registry.url, 'registry_search_cache_lookups_total', 'result="found"');
    const query = { query: 'wombat courier', filter: { kind: 'agent' }, limit: 5 };
    const first = await search(query);
    const cachedBefore = await found();
    assert.deepEqual(await search(query), first);
    assert.deepEqual(await search(query, writer), first, 'the same answer for another caller');
    assert.equal((await found()) - cachedBefore, 2);
    // A registration, an update and an unregistration each change the answer at once.
    const card = v1Card('Wombat Courier', 'https://wombat.example.org/a2a');
    const { id } = resultOf(await op(writer, { register: { agentCard: card } }));
    assert.equal((await search(query)).results[0]?.id, id);
    assert.equal((await search(query)).results[0]?.description, card.description);
    card.description = 'Carries parcels across the outback.';
    card.skills = [{ id: 'carry', name: 'Carry parcels', description: 'Carries parcels.', tags: ['parcels'], examples: ['carry this'] }];
    resultOf(await op(writer, { register: { agentCard: card } }));
    assert.equal((await search(query)).results[0]?.description, 'Carries parcels across the outback.');
    assert.equal((await search({ query: 'outback parcels' })).results[0]?.id, id);
    resultOf(await op(writer, { unregister: { id } }));
    assert.deepEqual(await search(query), first);
    assert.ok(!(await search({ query: 'outback parcels' })).results.some((h: WireJson) => h.id === id));
  });

  test('an update replaces the indexed skills', async () => {
    const card = v1Card('Narwhal Agent', 'https://narwhal.example.org/a2a');
    const { id } = resultOf(await op(writer, { register: { agentCard: card } }));
    card.skills = [{ id: 'juggle', name: 'Juggle pineapples', description: 'Juggles.', tags: ['circus'], examples: ['juggle'] }];
    resultOf(await op(writer, { register: { agentCard: card } }));
    assert.ok((await search({ query: 'pineapples' })).results.some((h: WireJson) => h.id === id));
    assert.ok(!(await allHits({ query: 'translate invoice' })).some((h) => h.id === id && h.match.type === 'skill'));
  });

  test('a restart gives the same results', async () => {
    const queries = [{ query: 'weather' }, { query: 'data', filter: { kind: 'agent' } }, { query: '', filter: { readOnly: true } }];
    const before = await Promise.all(queries.map((q) => search({ ...q, limit: 50 })));
    await registry.close();
    registry = await startTestRegistry({ REGISTRY_DATA_DIR: registry.dataDir, REGISTRY_PAGE_TOKEN_SECRET: PAGE_TOKEN_SECRET });
    reader = await sdkClient(registry.url);
    const after = await Promise.all(queries.map((q) => search({ ...q, limit: 50 })));
    const strip = (p: WireJson) => p.results.map((h: WireJson) => [h.id, h.match.type, h.match.id, h.score]);
    for (let i = 0; i < queries.length; i++) {
      assert.equal(after[i].total, before[i].total);
      assert.deepEqual(strip(after[i]), strip(before[i]));
    }
  });
});
