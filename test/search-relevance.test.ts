/**
 * Search that finds what people mean (issue 18), on the index itself: word forms in the entry's
 * language, typos, related words (WordNet and the operator's synonyms), query syntax, and
 * results per entry. The end-to-end path is covered in ./search.test.ts and ./search-hybrid.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { EntryDescription } from '../src/contract/description.js';
import type { ResultsPer, SearchHit } from '../src/contract/types.js';
import { describeAgentCard, describeMcpServer } from '../src/registry/describe.js';
import { createSearchIndex, type KeywordIndex, type SearchIndexOptions } from '../src/search/index.js';
import { detectLanguage, LANGUAGES, stem, wordsForDetection } from '../src/search/languages.js';
import { parseQuery } from '../src/search/query.js';
import { MAX_MATCHES_PER_HIT } from '../src/search/search-index.js';
import { SynonymFileError, Synonyms } from '../src/search/synonyms.js';
import { Vocabulary } from '../src/search/vocabulary.js';
import { WordNet } from '../src/search/wordnet.js';

interface Skill {
  id: string;
  name: string;
  description?: string;
  tags?: string[];
  examples?: string[];
}

function agent(name: string, description: string, skills: Skill[]): EntryDescription {
  return describeAgentCard(
    {
      name,
      description,
      version: '1.0.0',
      supportedInterfaces: [{ url: `https://${name.replace(/\W+/g, '-').toLowerCase()}.example.com/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: {},
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: skills.map((s) => ({ description: '', tags: [], examples: [], ...s })),
    },
    '1.0',
  );
}

function build(entries: [string, EntryDescription][], options: SearchIndexOptions = {}): KeywordIndex {
  const index = createSearchIndex(options);
  // One place in list's order: only relevance (then the id) orders the hits.
  for (const [id, description] of entries) index.upsert({ id, owner: 'o', listSeq: 0, description });
  return index;
}

const search = (index: KeywordIndex, text: string, resultsPer: ResultsPer = 'entry'): SearchHit[] =>
  index.search({ text, offset: 0, limit: 50, resultsPer }).hits;
const ids = (index: KeywordIndex, text: string): string[] => search(index, text).map((h) => h.id);

describe('language detection and stemmers', () => {
  const detect = (text: string): string => {
    const words: string[] = [];
    wordsForDetection(text, words, 300);
    return LANGUAGES[detectLanguage(words)]!;
  };

  it('tells the languages cards come in apart from a sentence or two', () => {
    assert.equal(detect('Finds a time that suits everyone and books the meeting in their calendars.'), 'en');
    assert.equal(detect('Prüft eingehende Rechnungen und bereitet die Zahlungen für den Monat vor.'), 'de');
    assert.equal(detect('Busca y reserva vuelos y hoteles para los viajes de negocios.'), 'es');
    assert.equal(detect('Analyse des contrats commerciaux et signale les clauses risquées.'), 'fr');
    assert.equal(detect('Suggerisce ricette italiane con gli ingredienti che hai in frigorifero.'), 'it');
    assert.equal(detect('Membantu mengelola pembayaran tagihan dan mencatat pengeluaran bulanan untuk keluarga yang sibuk.'), 'id');
    assert.equal(detect('Responde às perguntas frequentes dos clientes e abre um chamado para a equipe de suporte quando não sabe responder.'), 'pt');
  });

  it('falls back to English when the text has too few words to tell', () => {
    assert.equal(detect('Weather Assistant'), 'en');
    assert.equal(detect(''), 'en');
  });

  it('stems folded words the same way at index and query time', () => {
    assert.equal(stem('invoices', 0), stem('invoicing', 0));
    assert.equal(stem('rechnungen', 1), stem('rechnung', 1));
    assert.equal(stem('pembayaran', 5), stem('membayar', 5));
  });
});

describe('word forms', () => {
  const index = build([
    ['exact', agent('Invoices Desk', 'Keeps invoices.', [{ id: 's', name: 'Keep invoices' }])],
    ['stemmed', agent('Invoice Desk', 'Keeps one invoice at a time.', [{ id: 's', name: 'Keep invoice' }])],
    ['german', agent('Rechnungsprüfer', 'Prüft die Rechnungen und bereitet die Zahlungen vor.', [{ id: 's', name: 'Rechnungen prüfen', description: 'Prüft jede Rechnung auf Beträge.' }])],
    ['indonesian', agent('Asisten Keuangan', 'Membantu mengelola pembayaran tagihan dan mencatat pengeluaran untuk keluarga yang sibuk.', [{ id: 's', name: 'Pembayaran tagihan' }])],
    ['english-data', agent('Data Agent', 'Loads the data and checks the data for errors.', [{ id: 's', name: 'Check data' }])],
  ]);

  it('finds another form of a word, and ranks the exact form above it', () => {
    assert.deepEqual(ids(index, 'invoices ').slice(0, 2), ['exact', 'stemmed']);
    assert.deepEqual(ids(index, 'invoice ').slice(0, 2), ['stemmed', 'exact']);
    assert.ok(ids(index, 'invoicing ').includes('stemmed'));
    const [exact, stemmed] = search(index, 'invoices ');
    assert.ok(exact!.score > stemmed!.score && Math.floor(exact!.score) === Math.floor(stemmed!.score), 'same clause count, lower weight');
  });

  it('stems with the entry\'s language, found from its whole text', () => {
    assert.deepEqual(ids(index, 'rechnung '), ['german']);
    assert.deepEqual(ids(index, 'zahlung '), ['german']);
    assert.deepEqual(ids(index, 'bayar '), ['indonesian']);
  });

  it('does not apply a stemmer to entries of another language', () => {
    // Indonesian strips "ber-"/"-kan"; the English card's words must not be conflated by it.
    const i2 = build([['en', agent('Translator', 'Translates the documents of the client.', [{ id: 's', name: 'Translate' }])]], { typos: false });
    // "documents" and "documenti" share no Italian stem in an English entry.
    assert.deepEqual(ids(i2, 'documenti '), []);
  });

  it('can be turned off', () => {
    const off = build([['stemmed', agent('Invoice Desk', 'Keeps one invoice at a time.', [{ id: 's', name: 'Keep invoice' }])]], { wordForms: false, typos: false });
    assert.deepEqual(ids(off, 'invoicing '), []);
  });
});

describe('a variant weighs no more than the word typed', () => {
  // IDF alone weighed a rare variant above a common word: "Weatherly" (a longer word, 0.8) and
  // "Invoicing" (another form, 0.85) ranked above the entries named with the word typed.
  const index = build([
    ['named', agent('Weather Desk', 'Answers questions.', [])],
    ['longer', agent('Weatherly Desk', 'Answers questions.', [])],
    ['form', agent('Invoicing Desk', 'Answers questions.', [])],
    ['invoice', agent('Invoice Desk', 'Answers questions.', [])],
    ...['a', 'b', 'c', 'd', 'e'].map((n): [string, EntryDescription] => [n, agent(`Desk ${n}`, 'Sends the weather with an invoice.', [{ id: 's', name: 'Weather', description: 'Invoice.' }])]),
  ]);

  it('a longer word and another form rank below the word itself in the same field', () => {
    const rank = (text: string, id: string): number => ids(index, text).indexOf(id);
    assert.ok(rank('weather', 'named') < rank('weather', 'longer'), ids(index, 'weather').join(', '));
    assert.ok(rank('invoice ', 'invoice') < rank('invoice ', 'form'), ids(index, 'invoice ').join(', '));
  });
});

describe('typos', () => {
  const index = build([
    ['weather', agent('Weather Desk', 'Gives forecasts.', [{ id: 's', name: 'Weather forecast' }])],
    ['calendar', agent('Scheduler', 'Books meetings.', [{ id: 's', name: 'Calendar sync' }])],
    ['repository', agent('Code Host', 'Hosts code.', [{ id: 's', name: 'Create repository' }])],
  ]);

  it('words of five letters or more match one edit away, swaps included', () => {
    assert.deepEqual(ids(index, 'wether '), ['weather']);
    assert.deepEqual(ids(index, 'weahter '), ['weather']);
    assert.deepEqual(ids(index, 'calender '), ['calendar']);
  });

  it('long words match two edits away; short words do not match at all', () => {
    assert.deepEqual(ids(index, 'reposotiry '), ['repository']); // 10 letters, two substitutions
    assert.deepEqual(ids(index, 'wethr '), []); // 5 letters, two edits
    assert.deepEqual(ids(index, 'cde '), []); // under five letters
  });

  it('ranks typo matches below exact and stemmed matches, as half a word', () => {
    const i2 = build([
      ['exact', agent('A', 'x', [{ id: 's', name: 'Forecast' }])],
      ['stemmed', agent('B', 'x', [{ id: 's', name: 'Forecasts' }])],
      ['typo', agent('C', 'x', [{ id: 's', name: 'Forecst' }])],
    ]);
    assert.deepEqual(ids(i2, 'forecast '), ['exact', 'stemmed', 'typo']);
    const typo = search(i2, 'forecast ').find((h) => h.id === 'typo')!;
    assert.ok(typo.score < 1, `a typo counts as half a word: ${typo.score}`);
  });

  it('leaves a common, correctly spelt word alone', () => {
    const many: [string, EntryDescription][] = Array.from({ length: 12 }, (_, i) => [`w${i}`, agent(`Weather ${i}`, 'x', [{ id: 's', name: 'Weather' }])]);
    const i2 = build([...many, ['whether', agent('Logic', 'x', [{ id: 's', name: 'Whether or not' }])]]);
    assert.ok(!ids(i2, 'weather ').includes('whether'));
  });
});

describe('related words', () => {
  it('WordNet: synonyms and direct hypernyms, weighted below the query\'s own words', () => {
    const wordnet = new WordNet();
    const movie = wordnet.related('movie').map((t) => t.words.join(' '));
    assert.ok(movie.includes('film') && movie.includes('show'), movie.join(', '));
    assert.ok(wordnet.related('movies').some((t) => t.words.join(' ') === 'film'), 'base forms of plurals');
    assert.ok(wordnet.related('comedy').some((t) => t.words.join(' ') === 'fun'), 'a hypernym');
    assert.ok(wordnet.related('funny').some((t) => t.words.join(' ') === 'amusing'), 'adjectives');
    assert.ok(wordnet.related('movie').every((t) => t.weight < 1 && !t.strong));
    assert.ok(wordnet.knows('invoices') && !wordnet.knows('invoce'));

    const index = build([
      ['film', agent('CineMatch', 'Recommends films to watch tonight.', [{ id: 's', name: 'Recommend a film' }])],
      ['movie', agent('Movie Night', 'Picks a movie.', [{ id: 's', name: 'Pick a movie' }])],
      ['car', agent('Auto Claims', 'Helps drivers file car insurance claims.', [{ id: 's', name: 'File a claim' }])],
    ]);
    assert.deepEqual(ids(index, 'movie '), ['movie', 'film']);
    assert.ok(ids(index, 'automobile insurance ').includes('car'));
    const off = build([['film', agent('CineMatch', 'Recommends films.', [{ id: 's', name: 'Recommend a film' }])]], { wordNet: false });
    assert.deepEqual(ids(off, 'movie '), []);
  });

  it('the operator\'s synonyms count as the word itself, a little below it', () => {
    const synonyms = Synonyms.parse('# finance\nbilling, invoicing, invoice\ntax => vat, sales tax\n', 'test.txt');
    const index = build(
      [
        ['invoicing', agent('Ledger', 'Sends invoices.', [{ id: 's', name: 'Create invoice' }])],
        ['vat', agent('VAT Checker', 'Validates VAT numbers.', [{ id: 's', name: 'Validate VAT number' }])],
        ['sales', agent('Shop Tax', 'Computes sales tax per state.', [{ id: 's', name: 'Sales tax' }])],
        ['billing', agent('Billing Desk', 'Handles billing.', [{ id: 's', name: 'Billing' }])],
      ],
      { synonyms },
    );
    assert.deepEqual(ids(index, 'billing ').slice(0, 2), ['billing', 'invoicing']);
    const invoicing = search(index, 'billing ').find((h) => h.id === 'invoicing')!;
    assert.ok(invoicing.score >= 1, 'a full match of the word');
    assert.deepEqual(new Set(ids(index, 'tax ')), new Set(['vat', 'sales']));
    // One-way: "vat" does not find the generic tax agent.
    assert.deepEqual(ids(index, 'vat '), ['vat']);
    // A multi-word synonym is a phrase: "sales tax", not "sales" and "tax" anywhere.
    assert.equal(search(index, 'tax ').find((h) => h.id === 'sales')!.match.fields.includes('name'), true);
  });

  it('a synonym file with a mistake names the file and line', () => {
    assert.throws(() => Synonyms.parse('ok, fine\n => vat\n', 'syn.txt'), (e: Error) => e instanceof SynonymFileError && /syn\.txt:2: .*both sides/.test(e.message));
    assert.throws(() => Synonyms.parse('lonely\n', 'syn.txt'), /syn\.txt:1: .*at least two/);
    assert.throws(() => Synonyms.parse('a => b => c\n', 'syn.txt'), /syn\.txt:1: more than one "=>"/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'synonyms-'));
    try {
      assert.throws(() => Synonyms.load(path.join(dir, 'missing.txt')), /cannot read the synonym file .*missing\.txt/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('query syntax', () => {
  const index = build([
    ['github', describeMcpServer({ mcpServer: { name: 'github', url: 'https://gh.example.com/mcp' }, toolspec: { tools: [
      { name: 'create_pull_request', description: 'Create a new pull request in a repository', inputSchema: { type: 'object' } },
      { name: 'list_issues', description: 'List issues in a repository', inputSchema: { type: 'object' } },
    ] } })],
    ['scattered', agent('Request Router', 'Routes each request; can pull data from queues.', [{ id: 's', name: 'Route request' }])],
    ['finance', agent('Finance Bot', 'Answers questions.', [{ id: 'tax', name: 'Tax answers', tags: ['finance'] }, { id: 'beta', name: 'Beta forecasts', tags: ['experimental'] }])],
    ['news', agent('Finance News', 'Reads finance news.', [{ id: 'read', name: 'Read news', tags: ['news'] }])],
    ['translate', agent('Polyglot', 'Works with languages.', [{ id: 'tr', name: 'Translate text' }])],
    ['mentions', agent('Translate Mentions', 'Tracks who mentions you.', [{ id: 'm', name: 'Mentions' }])],
  ]);

  it('parses phrases, exclusions, OR, fields and prefixes', () => {
    const q = parseQuery('"pull request" -beta NOT draft github OR gitlab tags:finance transl* skill:"sales tax" https://x.example');
    assert.deepEqual(q.clauses[0]!.alternatives, [{ kind: 'phrase', words: ['pull', 'request'] }]);
    assert.deepEqual(q.excluded.map((c) => c.alternatives.map((a) => (a.kind === 'word' ? a.word : ''))), [['beta'], ['draft']]);
    assert.deepEqual(q.clauses[1]!.alternatives.map((a) => (a.kind === 'word' ? a.word : '')), ['github', 'gitlab']);
    assert.equal(q.clauses[2]!.fields, 4);
    assert.deepEqual(q.clauses[3]!.alternatives[0], { kind: 'word', word: 'transl', prefix: true, exact: false });
    assert.equal(q.clauses[4]!.scope, 'skill');
    // An unknown "field:" is plain text.
    assert.deepEqual(q.clauses.slice(5).map((c) => (c.alternatives[0]!.kind === 'word' ? c.alternatives[0]!.word : '')), ['https', 'example']);
    // A known field with nothing after it yet (typed so far) names no word; it was the word "tags".
    const typing = parseQuery('news tags: skill:');
    assert.deepEqual(typing.clauses.map((c) => (c.alternatives[0]!.kind === 'word' ? c.alternatives[0]!.word : '')), ['news']);
    assert.equal(parseQuery('tags:').clauses.length, 0);
    assert.deepEqual(ids(index, 'tags: news'), ids(index, 'news'));
  });

  it('a quoted phrase needs its words next to each other, in order', () => {
    assert.deepEqual(ids(index, '"pull request"'), ['github']);
    assert.ok(ids(index, 'pull request').includes('scattered'));
    assert.deepEqual(ids(index, '"data pull"'), []);
    // Stop words do not count: "request; can pull" has the pair (request, pull).
    assert.deepEqual(ids(index, '"request pull"'), ['scattered']);
    assert.equal(search(index, '"pull request"')[0]!.match.id, 'create_pull_request');
  });

  it('-word and NOT leave out what contains the word: a skill, or the entry when its own text has it', () => {
    assert.ok(ids(index, 'finance').includes('news'));
    assert.ok(!ids(index, 'finance -news').includes('news'), 'the entry\'s own name says news');
    assert.ok(!ids(index, 'finance NOT news').includes('news'));
    // A NOT with no word after it yet (as someone types) is ignored: it was the word "not", a prefix too.
    for (const typing of ['finance NOT', 'finance NOT ', 'finance NOT tags:']) {
      assert.deepEqual(parseQuery(typing).words, ['finance'], typing);
      assert.equal(parseQuery(typing).excluded.length, 0, typing);
      assert.deepEqual(ids(index, typing), ids(index, 'finance'), typing);
    }
    // Operators and bare fields alone are ignored the same way: what no text lists (it was nothing).
    assert.equal(ids(index, '').length, 6);
    for (const typing of ['tags:', 'NOT', 'OR ', 'skill: NOT']) assert.deepEqual(ids(index, typing), ids(index, ''), typing);
    const noBeta = search(index, 'forecasts OR answers -beta ').find((h) => h.id === 'finance')!;
    assert.equal(noBeta.match.id, 'tax');
    assert.ok(!(noBeta.matches ?? []).some((m) => m.id === 'beta'), 'the beta skill is excluded');
    assert.ok(search(index, 'forecasts ').some((h) => h.match.id === 'beta'));
    // A left-out word with parts (text-to-speech, get_weather) is a phrase: what says the words apart stays.
    assert.ok(ids(index, 'queues').includes('scattered'));
    for (const typing of ['queues -pull-request', 'queues NOT pull_request', 'queues -"pull request"']) {
      assert.deepEqual(ids(index, typing), ids(index, 'queues'), `${typing}: "Routes each request; can pull data from queues" says no "pull request"`);
    }
    assert.deepEqual(parseQuery('queues -pull-request').excluded, parseQuery('queues -"pull request"').excluded);
    assert.ok(!search(index, 'repository -pull-request', 'match').some((h) => h.match.id === 'create_pull_request'), 'what says it is left out');
    // Only exclusions: everything else, listed.
    assert.ok(!ids(index, '-news').includes('news') && ids(index, '-news').length === 5);
  });

  it('OR: either word satisfies one clause', () => {
    assert.deepEqual(new Set(ids(index, 'github OR polyglot')), new Set(['github', 'translate']));
    const both = search(index, 'github OR polyglot');
    assert.ok(both.every((h) => Math.floor(h.score) === 1), 'one clause each');
    // A word with parts beside OR is one phrase: "pull-request OR polyglot" was pull AND (request OR polyglot).
    assert.deepEqual(new Set(ids(index, 'pull-request OR polyglot')), new Set(['github', 'translate']), 'the router says "request" and "pull" apart');
    assert.deepEqual(new Set(ids(index, 'polyglot OR pull_request')), new Set(['github', 'translate']));
    assert.equal(parseQuery('speech-to-text OR transcription').clauses.length, 1);
  });

  it('field:word and skill:/tool:/agent: restrict where the word may match', () => {
    assert.deepEqual(ids(index, 'tags:finance'), ['finance']);
    assert.deepEqual(new Set(ids(index, 'name:finance')), new Set(['finance', 'news']));
    assert.deepEqual(ids(index, 'skill:translate'), ['translate']);
    assert.deepEqual(ids(index, 'agent:translate'), ['mentions']);
    assert.deepEqual(ids(index, 'tool:issues'), ['github']);
    assert.deepEqual(ids(index, 'skill:issues'), []);
  });

  it('word* matches every word it starts', () => {
    assert.deepEqual(new Set(ids(index, 'transl* ')), new Set(['translate', 'mentions']));
    assert.deepEqual(ids(index, 'transl '), []);
  });
});

describe('words written together or apart', () => {
  // The tokenizer files a camelCase name as its words (getWeather finds "weather"), so "GitHub" was
  // `git hub` and "JavaScript" `java script`: typed in lower case, as people type, they found nothing.
  const index = build([
    ['gh', agent('GitHub Helper', 'Opens issues.', [{ id: 'i', name: 'Open issue', tags: ['DevTools'] }])],
    ['js', agent('JavaScript Linter', 'Lints code.', [{ id: 'l', name: 'Lint', tags: ['machinelearning'] }])],
    ['hub', agent('Hub Finder', 'Finds a git repository by name.', [{ id: 'f', name: 'Find' }])],
  ]);
  it('a word is also read as the two words an entry holds side by side', () => {
    for (const q of ['github', 'github ']) assert.deepEqual(ids(index, q), ['gh'], q);
    // Typed apart, they are two words, which another entry may hold apart: the one holding them side by side first.
    for (const q of ['GitHub', 'git hub']) assert.deepEqual(ids(index, q), ['gh', 'hub'], q);
    assert.deepEqual(ids(index, 'javascript'), ['js']);
    assert.deepEqual(ids(index, 'tags:devtools'), ['gh']);
    assert.deepEqual(ids(index, '"github"'), [], 'a quoted word is matched as written');
  });
  it('a phrase is also read as its words written as one', () => {
    for (const q of ['tags:MachineLearning', 'tags:machine-learning', '"machine learning"']) assert.deepEqual(ids(index, q), ['js'], q);
  });
  it('a name written as an identifier (camelCase, snake_case) is found by its words and by them written as one, of up to four words, typed so far too; and named by them', () => {
    // Its words are its terms (`get weather tool`): a query of one word was read as two of them
    // at most, so "getweathertool" and "fetchstockquote" found nothing, nor "getweath" as typed,
    // and "getweather" ranked "GetWeatherTool" above the tools of that name.
    const tools = (name: string, ...names: string[]): EntryDescription =>
      describeMcpServer({ mcpServer: { name, url: `https://${name}.example.com/mcp` }, toolspec: { tools: names.map((n) => ({ name: n, description: 'Answers.', inputSchema: { type: 'object' } })) } });
    const named = build([
      ['camel', tools('alpha', 'getWeather')],
      ['snake', tools('beta', 'get_weather')],
      ['pascal', tools('gamma', 'GetWeatherTool')],
      ['quote', tools('delta', 'fetch_stock_quote', 'list_open_pull_requests')],
      ['bot', agent('WeatherBot Pro', 'Forecasts.', [{ id: 'f', name: 'Forecast' }])],
      ['says', agent('Weather Desk', 'Get the weather; a tool to get weather, a bot.', [{ id: 'w', name: 'Weather' }])],
    ]);
    const first = (q: string): string[] => ids(named, q).slice(0, 2).sort();
    for (const q of ['getweather', 'getweather ', 'get weather', 'get_weather', 'getWeather']) assert.deepEqual(first(q), ['camel', 'snake'], q);
    for (const q of ['getweathertool', 'GetWeatherTool', 'get_weather_tool', 'weathertool']) assert.equal(ids(named, q)[0], 'pascal', q);
    assert.deepEqual(ids(named, 'getweath').sort(), ['camel', 'pascal', 'says', 'snake'], 'typed so far (and a text saying "get the weather")');
    assert.equal(ids(named, 'getweatherto')[0], 'pascal', 'typed so far');
    for (const q of ['fetchstockquote', 'fetchstockquote ', 'stockquote', 'listopenpullrequests', 'list open pull requests']) assert.deepEqual(ids(named, q), ['quote'], q);
    for (const q of ['weatherbot', 'weatherbot pro', 'weather bot pro']) assert.equal(ids(named, q)[0], 'bot', q);
  });
});

describe('results per entry', () => {
  const skills = Array.from({ length: 14 }, (_, i) => ({ id: `s${i}`, name: `Weather report ${i}` }));
  const index = build([
    ['many', agent('Many', 'Reports.', skills)],
    ['spread', agent('Spread', 'Reports.', [{ id: 'a', name: 'Alerts' }, { id: 'b', name: 'Weather' }])],
    ['one', agent('One', 'Reports.', [{ id: 'x', name: 'Weather alerts today' }])],
  ]);

  it('one hit per entry: its best match, the others under matches, the rest counted', () => {
    const hits = search(index, 'weather ');
    assert.deepEqual(hits.map((h) => h.id).sort(), ['many', 'one', 'spread']);
    const many = hits.find((h) => h.id === 'many')!;
    assert.equal(many.match.type, 'skill');
    assert.equal(many.matches!.length, MAX_MATCHES_PER_HIT);
    assert.equal(many.moreInEntry, 14 - 1 - MAX_MATCHES_PER_HIT);
    assert.ok(many.matches!.every((m) => m.type === 'skill' && m.id !== many.match.id && m.fields.includes('name')));
    assert.equal(index.search({ text: 'weather ', offset: 0, limit: 50 }).total, 3);
  });

  it('an entry counts the words its skills match together; a skill with all of them is its match', () => {
    const hits = search(index, 'weather alerts ');
    assert.equal(hits[0]!.id, 'one', 'one skill with both words');
    const spread = hits.find((h) => h.id === 'spread')!;
    assert.equal(Math.floor(spread.score), 2, 'both words, over two skills');
    assert.ok(hits.find((h) => h.id === 'many')!.score < 2);
  });

  it('words scattered over many skills or tools count less than the words one of them holds', () => {
    // Shaped like firecrawl (26 tools of long descriptions, one saying "summarize", another
    // "PDF") against pdf-reader (one tool reading PDFs), for `summarize a pdf`.
    const filler = Array.from({ length: 24 }, (_, i) => ({ id: `f${i}`, name: `Crawl step ${i}`, description: 'Crawls a site and returns its pages as markdown.' }));
    const scattered = build([
      ['crawler', agent('Crawler', 'Crawls the web.', [
        { id: 'scrape', name: 'Scrape', description: 'Scrape a page and summarize it for the reader.' },
        { id: 'parse', name: 'Parse', description: 'Parse a PDF file or an office document into markdown.' },
        ...filler,
      ])],
      ['reader', agent('PDF Reader', 'Reads documents.', [{ id: 'read', name: 'Read PDF', description: 'Extracts the text of a PDF file.' }])],
    ]);
    const hits = search(scattered, 'summarize a pdf ');
    assert.deepEqual(hits.map((h) => h.id), ['reader', 'crawler'], 'one skill saying "PDF" above two of 26 saying a word each');
    assert.ok(hits[1]!.score > 1, 'the scattered word still counts, for less');
  });

  it('results per match on request: a hit per skill, at most three per entry', () => {
    const hits = search(index, 'weather ', 'match');
    assert.equal(hits.filter((h) => h.id === 'many').length, 3);
    assert.ok(hits.every((h) => h.matches === undefined));
  });
});

describe('vocabulary walks', () => {
  it('finds near terms with the same first letter, nearest first', () => {
    const v = new Vocabulary();
    for (const t of ['weather', 'whether', 'feather', 'wealth', 'weathers', 'w']) v.add(t, 0);
    assert.deepEqual(v.similar('wether', 1, 10).map((s) => s.term), ['weather', 'whether']);
    assert.deepEqual(v.similar('weahter', 1, 10).map((s) => s.term), ['weather']);
    assert.deepEqual(v.similar('weather', 1, 10).map((s) => s.term), ['weathers']);
    assert.deepEqual([...v.formsOf(stem('weathers', 0), 0)].sort(), ['weather', 'weathers']);
  });
});
