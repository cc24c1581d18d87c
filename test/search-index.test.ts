/**
 * The search index (src/search): matching, filters, ranking, grouping, paging, updates, on real
 * cards and toolspecs from the vendored corpus (test/fixtures/corpus) plus hand-made entries. Filter and paging results
 * on many generated entries are checked against a plain scan in ./search-oracle.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { McpServerDocument, McpTool, SearchFilter, SearchHit } from '../src/contract/types.js';
import type { EntryDescription } from '../src/contract/description.js';
import { describeAgentCard, describeMcpServer } from '../src/registry/describe.js';
import { createSearchIndex, GROUP_LIMIT, type IndexPage, type SearchIndex } from '../src/search/index.js';
import { MAX_JOINED_WORDS, parseQuery } from '../src/search/query.js';
import type { PostingsIndex } from '../src/search/search-index.js';
import { SNAPSHOT_FORMAT, readIndexSnapshot, writeIndexSnapshot } from '../src/search/snapshot-file.js';
import { fold, hyphenJoined, joinedReading, joinedTerms, letterJoined, tokenize, wordSpans } from '../src/search/text-encoder.js';
import { removeTempDir, tempDir } from './support/temp.js';

const CORPUS = new URL('./fixtures/corpus/', import.meta.url);

type Json = Record<string, unknown>;

/** What validation would decide, roughly: `supportedInterfaces` means v1.0, else v0.3. */
const generationOf = (card: Json): '0.3' | '1.0' => (Array.isArray(card.supportedInterfaces) ? '1.0' : '0.3');

function corpusCards(): { file: string; card: Json }[] {
  const dir = new URL('cards/', CORPUS);
  const out: { file: string; card: Json }[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    try {
      const card = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as unknown;
      if (typeof card === 'object' && card !== null && !Array.isArray(card)) out.push({ file, card: card as Json });
    } catch {
      // Not JSON: the corpus keeps some broken files on purpose.
    }
  }
  return out;
}

function corpusToolspecs(): { file: string; doc: McpServerDocument }[] {
  const dir = new URL('toolspecs/', CORPUS);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const toolspec = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as McpServerDocument['toolspec'];
      const name = file.replace(/\.json$/, '');
      return { file, doc: { mcpServer: { name, url: `https://mcp.example.com/${name}`, description: `${name} MCP server` }, toolspec } };
    });
}

/** Places in list's order, as storage gives them: each new entry's the next. */
let lastSeq = 0;
const nextSeq = (): number => ++lastSeq;

function add(index: SearchIndex, id: string, description: EntryDescription, owner = 'alice', listSeq = nextSeq()): void {
  index.upsert({ id, owner, listSeq, description });
}

interface SkillInput {
  id: string;
  name: string;
  description?: string;
  tags?: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
}

function agent(
  name: string,
  skills: SkillInput[],
  extra: { description?: string; provider?: string; streaming?: boolean; interfaces?: Json[]; inputModes?: string[]; outputModes?: string[] } = {},
): EntryDescription {
  return describeAgentCard(
    {
      name,
      description: extra.description ?? `${name} agent`,
      version: '1.0.0',
      supportedInterfaces: extra.interfaces ?? [{ url: `https://${name.replace(/\W+/g, '-').toLowerCase()}.example.com/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      provider: extra.provider ? { organization: extra.provider, url: 'https://example.com' } : undefined,
      capabilities: { streaming: extra.streaming ?? false },
      defaultInputModes: extra.inputModes ?? ['text/plain'],
      defaultOutputModes: extra.outputModes ?? ['text/plain'],
      skills: skills.map((s) => ({ description: '', tags: [], ...s })),
    },
    '1.0',
  );
}

function server(name: string, tools: Partial<McpTool>[], description = `${name} server`): EntryDescription {
  return describeMcpServer({
    mcpServer: { name, url: `https://${name}.example.com/mcp`, description },
    toolspec: { tools: tools.map((t, i) => ({ name: `tool${i}`, inputSchema: { type: 'object' }, ...t })) },
  });
}

/** Results per match (a hit per skill, tool or entry text): what most of these tests are about. */
const search = (index: SearchIndex, text: string, filter?: SearchFilter, limit = 50, offset = 0) =>
  index.search({ text, filter, offset, limit, resultsPer: 'match' }) as IndexPage;
const matchIds = (hits: SearchHit[]): string[] => hits.map((h) => `${h.id}/${h.match.id ?? h.match.type}`);

describe('text encoder', () => {
  it('splits identifiers in every casing', () => {
    for (const id of ['get_weather', 'getWeather', 'get-weather', 'GetWeather', 'get.weather', 'GET_WEATHER']) {
      assert.deepEqual(tokenize(id), ['get', 'weather'], id);
    }
    assert.deepEqual(tokenize('HTTPServer base64Encode getURL'), ['http', 'server', 'base64', 'encode', 'get', 'url']);
    // A name whose capitals follow one lower-case letter, or digits alone, is one word ("iOS" was `os`, "3D" `3`).
    for (const text of ['iOS iPhone eBay jQuery 3D 2FA macOS get3D', 'iOS iPhone eBay jQuery 3D 2FA macOS get3D é']) {
      assert.deepEqual(tokenize(text), ['ios', 'iphone', 'ebay', 'jquery', '3d', '2fa', 'mac', 'os', 'get3'], text);
    }
  });

  it('reads an acronym\'s plural as one word ("APIs" is `apis`, not `ap` and the stop word "is"), in ASCII text and any other', () => {
    const text = 'APIs PDFs IDs URLsToFetch getURLs HTTPServer XMLParser PDFsx';
    const terms = ['apis', 'pdfs', 'ids', 'urls', 'fetch', 'get', 'urls', 'http', 'server', 'xml', 'parser', 'pd', 'fsx'];
    assert.deepEqual(tokenize(text), terms);
    assert.deepEqual(tokenize(`${text} café`), [...terms, 'cafe']);
  });

  it('reads a letter, digits and a capital as one word ("A2A" is `a2a`, not `a2`), in ASCII text and any other', () => {
    const text = 'A2A B2B W3C a2a A2A-compatible EC2Instance base64Encode';
    const terms = ['a2a', 'b2b', 'w3c', 'a2a', 'a2a', 'compatible', 'ec2', 'instance', 'base64', 'encode'];
    assert.deepEqual(tokenize(text), terms);
    assert.deepEqual(tokenize(`${text} café`), [...terms, 'cafe']);
  });

  it('folds case and accents, including letters NFKD leaves alone', () => {
    assert.deepEqual(tokenize('Traducción città Überweisung Straße ÆON Łódź'), ['traduccion', 'citta', 'uberweisung', 'strasse', 'aeon', 'lodz']);
    assert.deepEqual(tokenize('TRADUCCIÓN'), ['traduccion']);
    // Greek's final sigma is sigma, however lower-casing or the writer spelled it ("ΟΔΟΣ.GR" lower-cases to `οδοσ`).
    for (const text of ['Οδός', 'ΟΔΟΣ', 'οδοσ', 'ΟΔΟΣ.GR']) assert.equal(tokenize(text)[0], 'οδοσ', text);
    const index = createSearchIndex();
    add(index, 'el', agent('ΠΡΑΚΤΟΡΑΣ ΚΑΙΡΟΥ', [{ id: 'f', name: 'Πρόγνωση καιρού', description: 'Για την ΟΔΟΣ.GR και την Αθήνα' }]));
    for (const q of ['πρακτορασ', 'Πράκτορας', 'οδος', 'ΟΔΟΣ']) assert.deepEqual(search(index, q).hits.map((h) => h.id), ['el'], q);
    // Arabic letters written either way: alef maksura and yeh, teh marbuta and heh, and the Persian yeh and keheh.
    add(index, 'ar', agent('مستشفى المدينة', [{ id: 'h', name: 'حجز موعد', description: 'مدرسة الطب في القاهرة' }]));
    add(index, 'fa', agent('کتابخانه', [{ id: 'b', name: 'جستجوی کتاب', description: 'کتاب فارسی' }]));
    // Quoted: as written, no typo (one letter off, the longer words were found as typos).
    const entries = (q: string) => [...new Set(search(index, q).hits.map((h) => h.id))];
    for (const q of ['"مستشفي"', '"مستشفى"', '"مدرسه"', '"مدرسة"']) assert.deepEqual(entries(q), ['ar'], q);
    for (const q of ['"كتاب"', '"فارسي"', '"کتاب"']) assert.deepEqual(entries(q), ['fa'], q);
  });

  it('reads Arabic-Indic, Persian and full-width digits as ASCII digits, and a Persian word with or without its zero-width non-joiner as one', () => {
    // "٢٠٢٤" (Arabic-Indic) and "۲۰۲۴" (Persian) found no "2024", nor "2024" them.
    for (const text of ['2024', '٢٠٢٤', '۲۰۲۴', '２０２４']) assert.deepEqual(tokenize(text), ['2024'], text);
    assert.deepEqual(tokenize('ISO ٨٦٠١ v۳ café'), ['iso', '8601', 'v3', 'cafe']);
    // ZWNJ (U+200C) joins no letters in Persian ("می‌خواهم", "I want"): typed or not, one word.
    assert.deepEqual(tokenize('می\u200cخواهم'), tokenize('میخواهم'));
    assert.equal(tokenize('می\u200cخواهم').length, 1);
    const index = createSearchIndex();
    add(index, 'ar', agent('تقرير المبيعات', [{ id: 'r', name: 'تقرير ٢٠٢٤', description: 'أرقام المبيعات لعام ٢٠٢٤' }]));
    add(index, 'fa', agent('گزارش', [{ id: 'g', name: 'گزارش ۱۴۰۳', description: 'می\u200cخواهم گزارش سال ۱۴۰۳' }]));
    add(index, 'en', agent('Sales report', [{ id: 's', name: 'Report 1403', description: 'Sales figures for 2024' }]));
    const entries = (q: string) => [...new Set(search(index, q).hits.map((h) => h.id))].sort();
    for (const q of ['2024', '٢٠٢٤', '۲۰۲۴']) assert.deepEqual(entries(q), ['ar', 'en'], q);
    for (const q of ['1403', '۱۴۰۳', '١٤٠٣']) assert.deepEqual(entries(q), ['en', 'fa'], q);
    for (const q of ['"میخواهم"', '"می\u200cخواهم"']) assert.deepEqual(entries(q), ['fa'], q);
  });

  it('reads the digits of every script (Devanagari, Bengali, Thai, Tibetan, Adlam...) as ASCII digits', () => {
    // Only Arabic-Indic and Persian digits were folded: "२०२४" found no "2024", nor "2024" it.
    for (const text of ['२०२४', '২০২৪', '๒๐๒๔', '༢༠༢༤', '᠒᠐᠒᠔', '𞥒𞥐𞥒𞥔', '𝟐𝟎𝟐𝟒']) assert.deepEqual(tokenize(text), ['2024'], text);
    assert.deepEqual(tokenize('रिपोर्ट v२ ২FA'), ['रिपोर्ट', 'v2', '2fa']);
    // Every decimal digit Node.js knows, each its own value: the zeros (and nines) of a few runs,
    // astral ones too, and no digit left outside ASCII.
    for (const zero of [0x0966, 0x09e6, 0x0e50, 0x0f20, 0x1040, 0x1810, 0xa9d0, 0x104a0, 0x11066, 0x1e950, 0x1d7ce, 0x1d7d8, 0x1d7f6]) {
      for (let d = 0; d < 10; d++) assert.equal(fold(String.fromCodePoint(zero + d)), String(d), `U+${(zero + d).toString(16)}`);
    }
    const unfolded: string[] = [];
    for (let cp = 0x80; cp < 0x20000; cp++) {
      const c = String.fromCodePoint(cp);
      if (/\p{Nd}/u.test(c) && !/^[0-9]$/.test(fold(c))) unfolded.push(`U+${cp.toString(16)}`);
    }
    assert.deepEqual(unfolded, []);
    const index = createSearchIndex();
    add(index, 'hi', agent('बिक्री रिपोर्ट', [{ id: 'r', name: 'रिपोर्ट २०२४', description: 'वर्ष २०२४ की बिक्री' }]));
    add(index, 'th', agent('รายงาน', [{ id: 't', name: 'รายงาน ๒๕๖๗', description: 'ยอดขาย ปี ๒๕๖๗' }]));
    add(index, 'en', agent('Sales report', [{ id: 's', name: 'Report 2567', description: 'Sales figures for 2024' }]));
    const entries = (q: string) => [...new Set(search(index, q).hits.map((h) => h.id))].sort();
    for (const q of ['2024', '२०२४', '২০২৪', '٢٠٢٤']) assert.deepEqual(entries(q), ['en', 'hi'], q);
    for (const q of ['2567', '๒๕๖๗', '२५६७']) assert.deepEqual(entries(q), ['en', 'th'], q);
    assert.deepEqual(entries('"रिपोर्ट 2024"'), ['hi']);
  });

  it('drops stop words and single letters, keeps digits, cuts very long terms', () => {
    assert.deepEqual(tokenize('the weather of a city in 3 days'), ['weather', 'city', '3', 'days']);
    assert.equal(tokenize('x'.repeat(500))[0]!.length, 40);
  });

  it('keeps a capital letter written alone (R, C, not A or I) and "IT" in capitals as terms, in ASCII text and any other', () => {
    const text = 'R language, Vitamin C. A get_X; Plan B! IT helpdesk ITSupport IT\'s I can; it is It; getX XCoordinate getIT ITS r E-Mail';
    const terms = ['r', 'language', 'vitamin', 'c', 'get', 'x', 'plan', 'b', 'it', 'helpdesk', 'it', 'support', 'it', 'get', 'coordinate', 'get', 'mail'];
    assert.deepEqual(tokenize(text), terms);
    assert.deepEqual(tokenize(`${text} café`), [...terms, 'cafe']);
  });

  it('keeps C++, C#, F# as words; elsewhere + and # separate, in ASCII text and any other', () => {
    const text = 'C++17 and C#10, F# (.NET), C/C++ or G++; a+b x+ y issue#12 #hashtag C#-based';
    // The C of "C/C++" is a capital letter written alone: the C language.
    const terms = ['c++', '17', 'c#', '10', 'f#', 'net', 'c', 'c++', 'g++', 'issue', '12', 'hashtag', 'c#', 'based'];
    assert.deepEqual(tokenize(text), terms);
    // The same words when the text is not ASCII (the other path).
    assert.deepEqual(tokenize(`${text} café C#é`), [...terms, 'cafe']);
  });

  it('finds the words in text as written where tokenize reads its terms (the web page marks them)', () => {
    for (const text of [
      '🌤️ Nimbus 👍🏽 👨‍👩‍👧 🇫🇷 © ™ → getWeather HTTPServer Café C++17, C# (.NET)',
      'किताबों का हिन्दी में अनुवाद करता है। தமிழ் மொழிபெயர்ப்பு',
      'บริการพยากรณ์อากาศ 東京の天気 ｴｰｼﾞｪﾝﾄ مُحَمَّد',
    ]) {
      const spans = wordSpans(text);
      assert.deepEqual(spans.flatMap(([start, end]) => tokenize(text.slice(start, end))), tokenize(text), text);
      assert.ok(spans.every(([start, end], i) => start < end && (i === 0 || spans[i - 1]![1] <= start)), 'spans in order, apart');
    }
    const words = (text: string) => wordSpans(text).map(([start, end]) => text.slice(start, end));
    assert.deepEqual(words('🌤️ C++, किताबों!'), ['🌤️', 'C++', 'किताबों']);
    assert.deepEqual(words('บริการพยากรณ์อากาศ'), ['บริการ', 'พยากรณ์', 'อากาศ']);
  });

  it('files a hyphenated word as one word too, not an identifier or a number, in ASCII text and any other', () => {
    // "co-pilot" was `co pilot` alone: "copil" as typed, "webhook" (another form of "web-hooks")
    // and a typo of the joined word found nothing.
    const text = 'A co-pilot for web-hooks, gpt-4, x-ray, a2a-registry and e-commerce; GitHub, get_weather-v2, getWeather-api, 2024-01-15, state-of-the-art';
    const joined = ['copilot', 'webhooks', 'gpt4', 'xray', 'a2aregistry', 'ecommerce'];
    assert.deepEqual(joinedTerms(text, MAX_JOINED_WORDS), joined);
    assert.deepEqual(joinedTerms(`${text} café`, MAX_JOINED_WORDS), joined);
    assert.deepEqual(joinedTerms('A co-pilot for web\u2011hooks', MAX_JOINED_WORDS), ['copilot', 'webhooks']);
    // A slug is an identifier, as get_weather is; its parts say what it says.
    assert.deepEqual(joinedTerms('weather-forecast', MAX_JOINED_WORDS), []);
    assert.deepEqual(joinedTerms('Weather-Forecast', MAX_JOINED_WORDS), ['weatherforecast']);
    // The text is read again for phrases only for a word losing a part, whose parts are not its words.
    assert.equal(joinedReading('A co-pilot for e-mail', MAX_JOINED_WORDS), 'A co-pilot for email');
    // The parts stay words of their own: "pilot" and "registry" find them as before.
    assert.deepEqual(tokenize('co-pilot a2a-registry'), ['co', 'pilot', 'a2a', 'registry']);
  });

  it('joins a letter written before a hyphen to its next part: "e-mail-sender" is `email` too, "E-mail Sender" read `email sender`', () => {
    // A longer word was filed only whole (`emailsender`): "email" found it as a typo of "mail".
    assert.deepEqual(joinedTerms('e-mail-sender and E-Mail-Versand', MAX_JOINED_WORDS), ['emailsender', 'email', 'emailversand']);
    assert.deepEqual(joinedTerms('e\u2011mail\u2011sender café', MAX_JOINED_WORDS), ['emailsender', 'email']);
    // Not a letter before a stop word (no "xto"), nor one inside a word (vitamin-d-3).
    assert.deepEqual(joinedTerms('x-to-y', MAX_JOINED_WORDS), ['xtoy']);
    // A name in either spelling, and as typed joined, is one reading (an entry's second name term).
    for (const text of ['E-mail Sender', 'e-mail-sender', 'E-MAIL sender']) assert.deepEqual(tokenize(letterJoined(text) ?? ''), ['email', 'sender'], text);
    assert.deepEqual(tokenize(letterJoined('X-Ray Scanner') ?? ''), ['xray', 'scanner']);
    for (const text of ['Email Sender', 'vitamin-d-3', 'x-to-y', 'Text-to-Speech']) assert.equal(letterJoined(text), undefined, text);
  });

  it('reads a name with its hyphenated words as one ("Co-Pilot Studio": `copilot studio`), not an identifier, a slug or a number', () => {
    // A name's other name term (./search-index.ts otherNameTerms): "copilot" named no "Co-Pilot".
    assert.deepEqual(tokenize(hyphenJoined('Co-Pilot Studio', MAX_JOINED_WORDS) ?? ''), ['copilot', 'studio']);
    assert.deepEqual(tokenize(hyphenJoined('Text-to-Speech', MAX_JOINED_WORDS) ?? ''), ['texttospeech']);
    assert.deepEqual(tokenize(hyphenJoined('Co\u2011Pilot café', MAX_JOINED_WORDS) ?? ''), ['copilot', 'cafe']);
    // A slug only when it loses a part, as joinedTerms files it.
    assert.deepEqual(tokenize(hyphenJoined('e-mail-sender', MAX_JOINED_WORDS) ?? ''), ['emailsender']);
    for (const text of ['weather-forecast', 'get_weather-v2', 'get_a_quote', 'TextToSpeech', '2024-01-15', 'Copilot Studio']) assert.equal(hyphenJoined(text, MAX_JOINED_WORDS), undefined, text);
  });

  it('makes words of ideographs', () => {
    assert.deepEqual(tokenize('東京の天気'), ['東', '京', 'の', '天', '気']);
    // Voicing marks stay (ジ is not シ); half-width kana is split like full-width.
    assert.deepEqual(tokenize('ジ'), ['ジ'.normalize('NFKD')]);
    assert.notDeepEqual(tokenize('ジ'), tokenize('シ'));
    assert.deepEqual(tokenize('ｴｰｼﾞｪﾝﾄ'), tokenize('エージェント'));
    assert.deepEqual(tokenize('𠮷野家'), ['𠮷', '野', '家']);
  });

  it('finds the words of Thai, Lao, Khmer and Myanmar text, written without spaces', () => {
    // A run of such text was one term: "อากาศ" (weather) did not find "บริการพยากรณ์อากาศ".
    assert.deepEqual(tokenize('บริการพยากรณ์อากาศ'), ['บริการ', 'พยากรณ์', 'อากาศ'].map((w) => w.normalize('NFKD')));
    assert.deepEqual(tokenize('ພະຍາກອນອາກາດ ការព្យាករណ៍អាកាសធាតុ'), ['ພະຍາກອນ', 'ອາກາດ', 'ការព្យាករណ៍', 'អាកាសធាតុ'].map((w) => w.normalize('NFKD')));
    assert.deepEqual(tokenize('Weatherบริการ'), ['weather', 'บริการ']);
  });

  it('makes words of emoji, not of symbols used as punctuation', () => {
    // Emoji were separators: "🌤 Weather agent" had no term for 🌤, so searching it found nothing.
    assert.deepEqual(tokenize('🌤 Weather agent'), ['🌤', 'weather', 'agent']);
    assert.deepEqual(tokenize('🌤️Weather'), ['🌤', 'weather'], 'presentation selector dropped, no space needed');
    assert.deepEqual(tokenize('👍🏽 👨‍👩‍👧 🇫🇷🇩🇪'), ['👍', '👨', '👩', '👧', '🇫🇷', '🇩🇪']);
    assert.deepEqual(tokenize('✅ Fast ▪ cheap → good ©2024 Acme® Weather™ ❗'), ['fast', 'cheap', 'good', '2024', 'acme', 'weather']);
  });

  it('keeps the marks of a word, folds the optional ones', () => {
    // Devanagari vowel signs were separators: "किताब" (book) became क, त, ब and matched "कुत्ता" (dog).
    assert.deepEqual(tokenize('हिन्दी किताब'), ['हिन्दी', 'किताब']);
    assert.deepEqual(tokenize('தமிழ் สวัสดี'), ['தமிழ்', 'สวัสดี']);
    assert.deepEqual(tokenize('مُحَمَّد مـرحبا שָׁלוֹם'), ['محمد', 'مرحبا', 'שלום']);
    assert.deepEqual(tokenize('Ver\u00adsi\u00adche\u00adrung'), ['versicherung']);
  });

  it('bounds hostile queries', () => {
    const q = parseQuery(`${'word '.repeat(10_000)}${Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ')}`);
    assert.ok(q.clauses.length <= 32);
    assert.deepEqual(parseQuery('   '), { hasText: false, clauses: [], excluded: [], words: [] });
    const lastPrefix = (text: string) => parseQuery(text).clauses.at(-1)?.alternatives.at(-1);
    assert.deepEqual(lastPrefix('transl'), { kind: 'word', word: 'transl', prefix: true, exact: false });
    assert.deepEqual(lastPrefix('transl '), { kind: 'word', word: 'transl', prefix: false, exact: false });
    // A word typed so far that ends in a vowel sign is a prefix too ("किता" → किताब).
    assert.deepEqual(lastPrefix('किता'), { kind: 'word', word: 'किता'.normalize('NFKD'), prefix: true, exact: false });
  });

  it('reads operators before emoji as before words', () => {
    // `-🌤` and `name:🌤` were the text "-🌤" and "name:🌤": a clause that wanted 🌤 (and the word "name").
    assert.deepEqual(parseQuery('weather -🌤').excluded.map((c) => c.alternatives), [[{ kind: 'word', word: '🌤', prefix: false, exact: false }]]);
    const named = parseQuery('name:🌤').clauses;
    assert.equal(named.length, 1);
    assert.equal(named[0]!.fields, parseQuery('name:weather').clauses[0]!.fields);
  });
});

describe('search index on the corpus', () => {
  const index = createSearchIndex();
  const cards = corpusCards();
  for (const { file, card } of cards) add(index, `card:${file}`, describeAgentCard(card, generationOf(card)));
  const specs = corpusToolspecs();
  for (const { file, doc } of specs) add(index, `mcp:${file}`, describeMcpServer(doc));
  const JOKES = 'card:Roelzz__dad-joke-a2a-agent__agent-card.json';

  it('indexes every parseable card and toolspec, however invalid', () => {
    assert.ok(cards.length >= 30, `only ${cards.length} cards parsed`);
    assert.equal(index.size, cards.length + specs.length);
  });

  it('finds a known skill by a word of its name, a tag and an example', () => {
    for (const [query, fields] of [
      ['random', 'name'],
      ['humor', 'tags'],
      ['laugh', 'examples'],
    ] as const) {
      const hits = search(index, query).hits;
      const hit = hits.find((h) => h.id === JOKES && h.match.id === 'random_joke');
      assert.ok(hit, `"${query}" did not find random_joke: ${matchIds(hits).join(', ')}`);
      assert.equal(hit.match.type, 'skill');
      assert.equal(hit.match.name, 'Random Dad Joke');
      assert.ok(hit.match.fields.includes(fields), `${query}: ${hit.match.fields.join(',')}`);
      assert.equal(hit.kind, 'agent');
      assert.equal(hit.name, 'Dad Joke Agent');
      assert.ok(hit.interfaces.length > 0);
    }
  });

  it('finds the agent itself by its description and provider', () => {
    const hits = search(index, 'lightening the mood').hits;
    assert.ok(hits.some((h) => h.id === JOKES && h.match.type === 'agent' && h.match.fields.includes('description')));
    const byProvider = search(index, 'Microsoft 365').hits;
    assert.ok(byProvider.some((h) => h.id === JOKES && h.match.type === 'agent' && h.match.fields.includes('provider')));
  });

  it('shows every interface as described (binding, version, tenant) and no empty members, also after a save and load', () => {
    const own = createSearchIndex();
    const interfaces = [
      { url: 'https://quokka.example.com/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'acme' },
      { url: 'https://quokka.example.com/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: 'https://quokka.example.com/grpc', protocolBinding: 'GRPC', tenant: 'acme' },
    ];
    add(own, '01890a5d-ac96-774b-bcce-b302099a8057', agent('Quokka agent', [], { interfaces }));
    const saved = own.saveState!();
    const loaded = createSearchIndex();
    loaded.loadState!(saved.parts);
    saved.release();
    for (const index of [own, loaded]) {
      const [hit] = search(index, 'quokka').hits;
      assert.equal(hit?.id, '01890a5d-ac96-774b-bcce-b302099a8057');
      assert.deepEqual(hit.interfaces, interfaces);
      for (const key of ['kid', 'health', 'drift', 'source']) assert.equal(key in hit, false, key);
    }
  });

  it('finds MCP tools by the words of their identifier names', () => {
    const hits = search(index, 'web search', { kind: 'mcp-server' }).hits;
    const brave = hits.find((h) => h.id === 'mcp:brave-search.json' && h.match.id === 'brave_web_search');
    assert.ok(brave, matchIds(hits).join(', '));
    assert.equal(brave.match.type, 'tool');
    assert.deepEqual(brave.interfaces, [{ url: 'https://mcp.example.com/brave-search', protocolBinding: 'MCP' }]);
    // The whole identifier, as typed, works too.
    assert.equal(search(index, 'brave_web_search').hits[0]?.match.id, 'brave_web_search');
  });

  it('pages through a broad query, each hit exactly once', () => {
    const all = search(index, 'data agent search', undefined, 1000);
    const seen: string[] = [];
    for (let offset = 0; offset < all.total; offset += 7) {
      const page = search(index, 'data agent search', undefined, 7, offset);
      assert.equal(page.total, all.total);
      seen.push(...matchIds(page.hits));
    }
    assert.equal(seen.length, all.total);
    assert.equal(new Set(seen).size, seen.length);
    assert.deepEqual(seen, matchIds(all.hits));
  });
});

describe('matching', () => {
  const index = createSearchIndex();
  add(index, 'es', agent('Asistente', [{ id: 'trad', name: 'Traducción de documentos', description: 'Traduce facturas', tags: ['traducción'] }]));
  add(index, 'it', agent('Guida', [{ id: 'city', name: 'Guida della città', description: 'Consigli per la città', tags: ['viaggio'] }]));
  add(index, 'de', agent('Bank', [{ id: 'pay', name: 'Überweisung prüfen', description: 'Prüft jede Überweisung', tags: ['Bank'] }]));
  add(index, 'id', agent('Asisten', [{ id: 'cuaca', name: 'Prakiraan cuaca', description: 'Memeriksa cuaca hari ini', tags: ['cuaca'] }]));
  add(index, 'maps', agent('Karte', [{ id: 'street', name: 'Straßensuche', description: 'Findet jede Straße', tags: [] }]));
  // One server per tool: grouping would fold the fourth tool of a single server.
  for (const name of ['get_weather', 'getWeatherAlerts', 'get-weather-map', 'GetWeatherRadar']) add(index, name, server('tools', [{ name }]));
  add(index, 'wx', server('text', [{ name: 'translate_text', description: 'Translates text' }]));

  it('ignores accents and case', () => {
    for (const [query, id] of [
      ['traduccion', 'es/trad'],
      ['TRADUCCIÓN', 'es/trad'],
      ['citta', 'it/city'],
      ['uberweisung', 'de/pay'],
      ['ÜBERWEISUNG', 'de/pay'],
      ['strasse', 'maps/street'],
      ['cuaca', 'id/cuaca'],
    ]) {
      assert.ok(matchIds(search(index, `${query} `).hits).includes(id!), `${query} → ${id}`);
    }
  });

  it('splits identifiers: every casing of get_weather is found by "weather"', () => {
    const ids = matchIds(search(index, 'weather ').hits);
    for (const tool of ['get_weather', 'getWeatherAlerts', 'get-weather-map', 'GetWeatherRadar']) assert.ok(ids.includes(`${tool}/${tool}`), tool);
    assert.ok(!ids.includes('wx/translate_text'));
  });

  it('finds an acronym\'s plural by the acronym and the other way round ("api" finds "APIs", "PDFs" "PDF"), as any word\'s plural', () => {
    const acronyms = createSearchIndex();
    add(acronyms, 'docs', agent('Docs', [{ id: 'read', name: 'Read documents', description: 'Reads PDFs and calls REST APIs by their IDs' }]));
    add(acronyms, 'one', server('files', [{ name: 'open_pdf', description: 'Opens one PDF from a URL' }]));
    for (const [query, want] of [
      ['api ', ['docs/read']],
      ['pdf ', ['docs/read', 'one/open_pdf']],
      ['PDFs ', ['docs/read', 'one/open_pdf']],
      ['id ', ['docs/read']],
      ['urls ', ['one/open_pdf']],
    ] as const) {
      assert.deepEqual(matchIds(search(acronyms, query).hits).sort(), [...want].sort(), query);
    }
  });

  it('finds "A2A" by "a2a" as typed, and "A2A" typed does not find "A2"', () => {
    const names = createSearchIndex();
    add(names, 'bridge', agent('Bridge', [{ id: 'talk', name: 'Talk', description: 'Speaks A2A to other agents' }]));
    add(names, 'plane', agent('Plane', [{ id: 'fly', name: 'Fly', description: 'Flies the A2 route' }]));
    for (const query of ['a2a ', 'A2A ']) assert.deepEqual(matchIds(search(names, query).hits), ['bridge/talk'], query);
  });

  it('matches the last word as a prefix, unless the query ends with a space', () => {
    assert.ok(matchIds(search(index, 'transl').hits).includes('wx/translate_text'));
    assert.ok(matchIds(search(index, 'Überw').hits).includes('de/pay'));
    assert.equal(search(index, 'transl ').total, 0);
  });

  it('finds the names that are a capital letter or "IT": "R language", "IT helpdesk"', () => {
    const index = createSearchIndex();
    // Newer, so they came first when "R" and "IT" were no words and only the rest was searched.
    add(index, 'r', agent('Stats', [{ id: 'fit', name: 'Fit models', description: 'Fits models in the R language.' }]), 'o', 1);
    add(index, 'it', agent('Desk', [{ id: 'desk', name: 'IT helpdesk', description: 'Resets passwords.' }]), 'o', 1);
    add(index, 'lang', agent('Tutor', [{ id: 'learn', name: 'Language tutor', description: 'Teaches a language.' }]), 'o', 2);
    add(index, 'hr', agent('People', [{ id: 'hr', name: 'HR helpdesk', description: 'Answers it all.' }]), 'o', 2);
    const first = (text: string) => search(index, text).hits[0]?.id;
    assert.equal(first('R language'), 'r');
    assert.equal(first('IT helpdesk'), 'it');
    assert.deepEqual(search(index, 'R').hits.map((h) => h.id), ['r']);
    assert.deepEqual(search(index, 'IT').hits.map((h) => h.id), ['it'], '"it" as a word (HR\'s "Answers it all") is still a stop word');
  });

  it('finds a tag that is one letter or a stop word by `tags:` and `skill:`, in either case ("tag:x", "skill:r")', () => {
    const index = createSearchIndex();
    add(index, 'lower', agent('Alpha', [{ id: 'stats', name: 'Statistics', tags: ['r', 'stats'] }]));
    add(index, 'upper', agent('Beta', [{ id: 'models', name: 'Models', tags: ['R'] }]));
    add(index, 'x', agent('Gamma', [{ id: 'scan', name: 'Scans', tags: ['x'] }]));
    add(index, 'it', agent('Delta', [{ id: 'desk', name: 'Helpdesk', tags: ['it'] }]));
    const ids = (text: string) => search(index, text).hits.map((h) => h.id).sort();
    assert.deepEqual(ids('tag:x'), ['x']);
    assert.deepEqual(ids('tags:X'), ['x']);
    assert.deepEqual(ids('tag:r'), ['lower', 'upper']);
    assert.deepEqual(ids('skill:r'), ['lower', 'upper']);
    assert.deepEqual(ids('tags:it'), ['it']);
    assert.deepEqual(ids('stats -tag:r'), [], 'an excluded one-letter tag excludes');
    assert.deepEqual(ids('r'), [], 'a bare lower-case letter is still no word');
    // Among other words they are dropped as before, in the tags and in a field's phrase alike.
    add(index, 'tts', agent('Voice', [{ id: 'tts', name: 'Speak', description: 'Turns text to speech.', tags: ['text-to-speech'] }]));
    for (const q of ['description:"text to speech"', 'tags:"text to speech"', 'skill:"text to speech"', 'name:"the voice"']) assert.deepEqual(ids(q), ['tts'], q);
  });

  it('reads a doubled NOT or dash, and a field with a dash after it, as one exclusion ("NOT NOT x", "--beta", "tags:-beta")', () => {
    const index = createSearchIndex();
    add(index, 'beta', agent('Forecast', [{ id: 'f', name: 'Weather forecast', tags: ['beta'] }]));
    add(index, 'stable', agent('Outlook', [{ id: 'o', name: 'Weather outlook', tags: ['stable'] }]));
    add(index, 'notes', agent('Notes', [{ id: 'n', name: 'Weather notes: not for sailing', tags: ['stable'] }]));
    const ids = (text: string) => search(index, text).hits.map((h) => h.id).sort();
    assert.deepEqual(ids('weather NOT NOT'), ['beta', 'notes', 'stable'], 'a NOT with no word after it leaves nothing out, doubled too');
    for (const q of ['weather NOT NOT beta', 'weather --beta', 'weather tags:-beta', 'weather -tags:-beta']) assert.deepEqual(ids(q), ['notes', 'stable'], q);
    assert.deepEqual(ids('weather NOT NOT notes'), ['beta', 'stable']);
    // As phones and word processors write a dash typed before a word: em dash (from "--"), en dash, minus.
    for (const q of ['weather \u2014beta', 'weather \u2013beta', 'weather \u2212beta', 'weather tags:\u2014beta']) assert.deepEqual(ids(q), ['notes', 'stable'], q);
  });

  it('leaves out the last word as written, not as a prefix, unless starred ("weather -beta" keeps "Betaville")', () => {
    const index = createSearchIndex();
    add(index, 'beta', agent('Forecast', [{ id: 'f', name: 'Weather forecast', tags: ['beta'] }]));
    add(index, 'town', agent('Betaville', [{ id: 't', name: 'Weather for Betaville' }]));
    const ids = (text: string) => search(index, text).hits.map((h) => h.id).sort();
    for (const q of ['weather -beta', 'weather NOT beta', 'weather -beta ']) assert.deepEqual(ids(q), ['town'], q);
    assert.deepEqual(ids('weather -beta*'), [], 'a star still leaves out every word starting with it');
  });

  it('joins nothing with an OR whose next word is left out ("weather OR -rain forecast" is not weather OR forecast)', () => {
    const index = createSearchIndex();
    add(index, 'both', agent('Both', [{ id: 'b', name: 'Weather forecast' }]));
    add(index, 'weather', agent('Station', [{ id: 'w', name: 'Weather station' }]));
    add(index, 'forecast', agent('Sales', [{ id: 's', name: 'Sales forecast' }]));
    add(index, 'rain', agent('Rain', [{ id: 'r', name: 'Rain weather forecast' }]));
    // Matching both words ranks first: as alternatives, each word alone was as good (newest first).
    const ids = (text: string) => search(index, text).hits.map((h) => h.id);
    for (const q of ['weather OR -rain forecast', 'weather OR NOT rain forecast']) assert.equal(ids(q)[0], 'both', q);
    assert.deepEqual(ids('weather OR forecast -rain').sort(), ['both', 'forecast', 'weather'], 'an OR between two words still joins them');
  });

  it('reads what follows a known field as its value, punctuation first too ("tags:.NET", "name:(beta)"), never the field\'s name as a word', () => {
    const index = createSearchIndex();
    add(index, 'dotnet', agent('Builder', [{ id: 'b', name: 'Build', tags: ['.NET'] }]));
    add(index, 'beta', agent('Beta', [{ id: 'r', name: 'Run' }]));
    add(index, 'says', agent('Labeler', [{ id: 'l', name: 'Label', description: 'Adds tags and a name to beta .NET builds' }]));
    const ids = (text: string) => search(index, text).hits.map((h) => h.id).sort();
    assert.deepEqual(ids('tags:.NET'), ['dotnet']);
    assert.deepEqual(ids('tags:#net'), ['dotnet']);
    assert.deepEqual(ids("tags:'.net'"), ['dotnet']);
    assert.deepEqual(ids('name:(beta)'), ['beta']);
    assert.deepEqual(ids('build tags:-.NET'), ['says'], 'a dash after the field still leaves the value out');
    for (const q of ['tags:*', 'tags:-', 'name:(']) assert.equal(search(index, q).total, 3, `${q}: a field with no word yet is ignored, listing every entry`);
    // So is a quote, dash or star with no word yet, as the first keys of "pull request" or -beta are typed (they found nothing).
    for (const q of ['"', '-', '-"', '--', '—', '*', '" ', '-*']) assert.equal(search(index, q).total, 3, `${q}: no word yet, listing every entry`);
    for (const q of ['!!!', '"!!!"', 'the']) {
      const page = search(index, q);
      assert.equal(page.total, 0, `${q}: text of no word still finds nothing`);
      assert.match(page.reason ?? '', /^the query has no word search looks for: ".+" is only words too common or too short to search/, `${q}: and says why`);
    }
    // Quoted cut between characters: single letters written as mathematical letters (𝐚, two UTF-16 units each) are no words either.
    const letters = `!${'𝐚 '.repeat(40)}`;
    assert.equal(search(index, letters).reason, `the query has no word search looks for: "!${'𝐚 '.repeat(29)}𝐚…" is only words too common or too short to search (stop words, single letters) or signs; search for a more specific word`);
    assert.equal(search(index, 'zzqxv').reason, undefined, 'a word no entry has is a word search looks for');
    assert.equal(search(index, '-zzqxv the').total, 3, 'a word left out lists what is left');
  });

  it('a filter nothing can pass says why, except where unverified agents are hidden (their owners and tags are in the index, and a reason would tell which exist)', () => {
    const index = createSearchIndex();
    add(index, 'shown', agent('Shown', [{ id: 's', name: 'Ship' }]), 'alice');
    // Not verified: hidden from a search with hideUnverifiedAgents.
    add(index, 'hidden', agent('Hidden', [{ id: 'h', name: 'Hide' }]), 'carol');
    const reasonOf = (owner: string, hideUnverifiedAgents: boolean) =>
      (index.search({ text: '', filter: { owner }, offset: 0, limit: 10, resultsPer: 'match', hideUnverifiedAgents }) as IndexPage).reason;
    assert.match(reasonOf('nobody', false) ?? '', /^the filter leaves no entry: no entry belongs to the "owner" "nobody"/);
    assert.equal(reasonOf('carol', true), undefined, 'an owner only hidden entries have: nothing is said');
    assert.equal(reasonOf('nobody', true), undefined, 'so an owner no entry has is answered alike');
  });

  it('takes typographic quotation marks (“ ”, „ “, « ») as quotes: a phrase, as phones write "', () => {
    const index = createSearchIndex();
    add(index, 'pr', agent('Reviewer', [{ id: 'r', name: 'Pull request review' }]));
    add(index, 'apart', agent('Fetcher', [{ id: 'f', name: 'Request a pull of data' }]));
    const ids = (text: string) => search(index, text).hits.map((h) => h.id).sort();
    for (const q of ['"pull request"', '\u201Cpull request\u201D', '\u201Epull request\u201C', '\u00ABpull request\u00BB', '\uFF02pull request\uFF02']) assert.deepEqual(ids(q), ['pr'], q);
    assert.deepEqual(ids('pull -\u201Crequest review\u201D'), ['apart'], 'left out as a phrase too');
  });

  it('takes Japanese corner brackets (「」, 『』, ｢｣) as quotes: a phrase, as "..." is', () => {
    // 「天気予報」 was four separate characters, found apart and anywhere.
    const index = createSearchIndex();
    add(index, 'jp', agent('天気エージェント', [{ id: 'w', name: '天気予報', description: '明日の天気予報を教えます' }], { description: '天気予報のエージェント' }));
    add(index, 'apart', agent('予定エージェント', [{ id: 'p', name: '予定の報告', description: '天気と気分の記録' }]));
    const ids = (text: string) => [...new Set(search(index, text).hits.map((h) => h.id))].sort();
    assert.deepEqual(ids('天気予報'), ['apart', 'jp'], 'unquoted, the characters anywhere');
    for (const q of ['"天気予報"', '「天気予報」', '『天気予報』', '\uFF62天気予報\uFF63']) assert.deepEqual(ids(q), ['jp'], q);
    assert.deepEqual(ids('天気 -「天気予報」'), ['apart'], 'left out as a phrase too');
  });

  it('matches a phrase only where its words are next to each other, in this order, in one text', () => {
    // A phrase matched a unit having its rarest word and each adjacent pair of its words anywhere:
    // "pull request review" found a text saying "pull request" and, apart, "request review", and
    // left it out of `pull -"pull request review"`.
    const index = createSearchIndex();
    const apart = 'Opens a pull request, then asks for a request review from the team. Also sends email summaries.';
    add(index, 'apart', agent('Dibbler', [{ id: 'd', name: 'Dibbler skill', description: apart, tags: ['opens pull', 'request review'] }], { description: apart }));
    add(index, 'says', agent('Potoroo', [{ id: 'p', name: 'Potoroo skill', description: 'Writes a pull request review for every change.' }]));
    const ids = (text: string) => [...new Set(search(index, text).hits.map((h) => h.id))].sort();
    assert.deepEqual(ids('"pull request review"'), ['says'], 'the words apart, in one text or across two tags, are not the phrase');
    assert.deepEqual(ids('tags:"pull request review"'), [], 'two tags in a row are two texts: "opens pull", "request review"');
    assert.deepEqual(ids('"review request"'), [], 'the words in the other order are not it');
    assert.deepEqual(ids('"pull request"'), ['apart', 'says']);
    assert.deepEqual(ids('"request review"'), ['apart', 'says']);
    assert.deepEqual(ids('pull -"pull request review"'), ['apart'], 'an excluded phrase leaves out only what says it');
    assert.deepEqual(
      search(index, '"request review"').hits.filter((h) => h.id === 'apart').map((h) => `${h.match.type}: ${h.match.fields.join(',')}`).sort(),
      ['agent: description', 'skill: tags,description'],
    );
  });

  it('matches a quoted phrase with a hyphenated word written either way ("love a copilot", "love a co-pilot"), and a camelCase word typed as one', () => {
    // The words kept for phrases are a text's prose words (`co pilot`, `java script`): a phrase
    // with the word as one found only the texts saying it so, and one with a hyphen only the others.
    const index = createSearchIndex();
    add(index, 'hyphen', agent('A', [{ id: 's', name: 'Pen', description: 'Writers love a co-pilot for pre-processing drafts.' }]));
    add(index, 'joined', agent('B', [{ id: 's', name: 'Pen', description: 'Writers love a copilot for preprocessing drafts.' }]));
    add(index, 'camel', agent('C', [{ id: 's', name: 'Hire', description: 'A JavaScript developer.' }]));
    add(index, 'apart', agent('D', [{ id: 's', name: 'Pen', description: 'Writers love a pilot, co-owned.' }]));
    const ids = (text: string) => [...new Set(search(index, text).hits.map((h) => h.id))].sort();
    for (const text of ['"love a copilot"', '"love a co-pilot"', '"love a Co-Pilot"', '"copilot for preprocessing drafts"', '"co-pilot for pre-processing drafts"', '"copilot for pre-processing"', '"co-pilot for preprocessing"']) {
      assert.deepEqual(ids(text), ['hyphen', 'joined'], text);
    }
    assert.deepEqual(ids('"javascript developer"'), ['camel']);
    assert.deepEqual(ids('-"love a copilot" writers'), ['apart'], 'left out written either way');
  });

  it('does not find a phrase of two words a long tool description has apart (16-bit pair hashes did, about 1 in 16 at 4,000 pairs)', () => {
    // A unit's pairs were kept as a set of 16-bit hashes: a pair a long description lacks
    // matched one it has with a probability of its pairs / 65,536 ("manual mentioned" found
    // firecrawl_monitor_create, which says both words far apart).
    const firecrawl = corpusToolspecs().find((t) => t.file === 'firecrawl.json')!;
    const index = createSearchIndex();
    add(index, 'firecrawl', describeMcpServer(firecrawl.doc));
    assert.deepEqual(matchIds(search(index, '"manual mentioned"').hits), []);
    let checked = 0;
    for (const tool of firecrawl.doc.toolspec.tools) {
      const texts = [tool.name, tool.title, tool.annotations?.title, tool.description].filter((t): t is string => !!t).map((t) => tokenize(t));
      const words = [...new Set(texts.flat())];
      if (words.length < 150) continue;
      const adjacent = new Set(texts.flatMap((t) => t.slice(1).map((w, i) => `${t[i]} ${w}`)));
      // Words of the tool, taken two by two in a fixed scatter, that no text says next to each other.
      for (let i = 0; i < 400; i++) {
        const a = words[(i * 7919) % words.length]!;
        const b = words[(i * 104_729 + 13) % words.length]!;
        if (a === b || adjacent.has(`${a} ${b}`)) continue;
        const hits = search(index, `"${a} ${b}"`).hits.filter((h) => h.match.id === tool.name);
        assert.deepEqual(hits.map((h) => h.match.id), [], `"${a} ${b}" in ${tool.name}`);
        checked++;
      }
    }
    assert.ok(checked > 2000, `${checked} phrases checked`);
  });

  it('reads a quote not closed yet to the end of the text, its last word typed so far ("weath, weather "fore, "pull req)', () => {
    const index = createSearchIndex();
    add(index, 'wx', agent('Weather', [{ id: 'f', name: 'Weather forecast' }]));
    add(index, 'sales', agent('Sales', [{ id: 's', name: 'Sales forecasts', description: 'Figures before the weather turns' }]));
    add(index, 'pr', agent('Reviewer', [{ id: 'r', name: 'Pull request review' }]));
    add(index, 'apart', agent('Fetcher', [{ id: 'f', name: 'Request a pull of data' }]));
    const ranked = (text: string) => index.search({ text, offset: 0, limit: 50 }).hits.map((h) => h.id);
    const ids = (text: string) => ranked(text).sort();
    assert.deepEqual(ids('"weath'), ['sales', 'wx'], 'a word typed halfway: completed, as unquoted');
    assert.deepEqual(ids('"pull req'), ['pr'], 'still a phrase: the words apart are not it');
    assert.deepEqual(ids('"weather forec'), ['wx']);
    // A last word too short to complete yet is left out, as a letter is: the phrase so far.
    assert.deepEqual(ids('"pull re'), ids('"pull r'));
    assert.deepEqual(ids('"pull re'), ['apart', 'pr']);
    // A Chinese character is a whole word as typed: `"天气预` is that phrase, not `"天气`.
    add(index, 'zh', agent('天气助手', [{ id: 'f', name: '天气预报' }]));
    add(index, 'zh-map', agent('地图', [{ id: 'm', name: '天气图' }]));
    assert.deepEqual(ids('"天气预'), ['zh']);
    assert.deepEqual(ranked('weather "fore'), ['wx', 'sales'], 'both words: the weather forecast first');
    // As written once closed, or once a space ends the word; a left-out phrase is as written.
    assert.deepEqual(ids('"pull req"'), []);
    assert.deepEqual(ids('"weath '), []);
    assert.deepEqual(ids('pull -"request rev'), ['apart', 'pr']);
  });

  it('reads full-width operators and fields as a Chinese or Japanese input method types them ("tags：finance", "ＮＯＴ beta")', () => {
    const index = createSearchIndex();
    add(index, 'fin', agent('Ledger', [{ id: 'l', name: 'Weather of the markets', tags: ['finance'] }]));
    add(index, 'beta', agent('Forecast', [{ id: 'f', name: 'Weather forecast beta', tags: ['tags'] }]));
    add(index, 'plain', agent('Outlook', [{ id: 'o', name: 'Weather outlook', description: 'No finance here' }]));
    const ids = (text: string) => search(index, text).hits.map((h) => h.id).sort();
    for (const q of ['tags\uFF1Afinance', '\uFF54\uFF41\uFF47\uFF53:finance', 'tags:finance']) assert.deepEqual(ids(q), ['fin'], q);
    for (const q of ['weather \uFF2E\uFF2F\uFF34 beta', 'weather \uFF0Dbeta']) assert.deepEqual(ids(q), ['fin', 'plain'], q);
  });

  it('takes a word written after a dot (".NET") as a name, not as a prefix', () => {
    const index = createSearchIndex();
    add(index, 'dotnet', agent('Builder', [{ id: 'build', name: 'Build .NET projects' }]));
    add(index, 'network', agent('Scanner', [{ id: 'scan', name: 'Network scanner' }]));
    const ids = (text: string) => search(index, text).hits.map((h) => h.id).sort();
    assert.deepEqual(ids('.NET'), ['dotnet']);
    assert.deepEqual(ids('C# .NET'), ['dotnet']);
    assert.deepEqual(ids('.NET*'), ['dotnet', 'network'], 'a star still asks for the prefix');
    assert.deepEqual(ids('netw'), ['network'], 'a word typed halfway is still a prefix');
  });

  it('never throws on special characters and bounds long queries', () => {
    for (const q of ['!!!', '*', '(', '[a-', '\\', '"', "'; DROP TABLE", '\u0000', '💥🔥', '%s%n', 'a'.repeat(100_000), '__proto__ constructor']) {
      const page = search(index, q);
      assert.ok(Array.isArray(page.hits), q.slice(0, 20));
    }
    assert.equal(search(index, '!!!').total, 0);
    assert.equal(search(index, 'the of and').total, 0);
    const long = Array.from({ length: 5000 }, (_, i) => `weather${i}`).join(' ');
    const t = performance.now();
    search(index, long);
    assert.ok(performance.now() - t < 1000);
  });
});

describe('ranking', () => {
  it('orders name and tag matches above description above examples', () => {
    const index = createSearchIndex();
    // One place in list's order for all, so only the fields decide.
    const at = 1;
    add(index, 'd-examples', agent('A', [{ id: 's', name: 'Alpha', examples: ['invoice please'] }]), 'o', at);
    add(index, 'c-description', agent('B', [{ id: 's', name: 'Beta', description: 'Handles every invoice' }]), 'o', at);
    add(index, 'b-tags', agent('C', [{ id: 's', name: 'Gamma', tags: ['invoice'] }]), 'o', at);
    add(index, 'a-name', agent('D', [{ id: 's', name: 'Invoice reader' }]), 'o', at);
    const hits = search(index, 'invoice ').hits;
    assert.deepEqual(hits.map((h) => h.id), ['a-name', 'b-tags', 'c-description', 'd-examples']);
    assert.deepEqual(hits.map((h) => h.match.fields), [['name'], ['tags'], ['description'], ['examples']]);
    for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1]!.score > hits[i]!.score);
  });

  it('ranks a request written as a sentence by its subject: its question words and "please" outrank nothing', () => {
    const index = createSearchIndex();
    add(index, 'wx', agent('Skyline', [{ id: 'f', name: 'Weather forecast', description: 'Gives the weather forecast for a city' }]));
    add(index, 'faq', agent('Helpdesk', [{ id: 'q', name: 'FAQ', description: 'Explains what to do and how to get help, who to ask, when and where' }]));
    const ids = (text: string) => index.search({ text, offset: 0, limit: 10 }).hits.map((h) => h.id);
    for (const q of ['how do I get the weather forecast?', 'what is the weather forecast', 'where do I find a weather forecast please', 'weather forecast please']) {
      assert.equal(ids(q)[0], 'wx', q);
    }
    add(index, 'us', agent('Filer', [{ id: 'f', name: 'US tax forms' }], { description: 'Files forms' }));
    add(index, 'uk', agent('Clerk', [{ id: 'f', name: 'UK tax forms' }], { description: 'Files forms' }));
    assert.equal(ids('US tax forms')[0], 'us', '"US" is a name, not "us"');
    // In the other languages the index stems too.
    add(index, 'es', agent('Traductor', [{ id: 't', name: 'Traducción', description: 'Traduce facturas al inglés' }], { description: 'Traduce documentos' }));
    add(index, 'es-faq', agent('Ayuda', [{ id: 'q', name: 'Preguntas', description: 'Explica qué hacer, cómo y dónde, y quién ayuda con facturas' }], { description: 'Responde preguntas' }));
    add(index, 'de', agent('Übersetzer', [{ id: 't', name: 'Übersetzung', description: 'Übersetzt Rechnungen ins Englische' }], { description: 'Übersetzt' }));
    add(index, 'de-faq', agent('Hilfe', [{ id: 'q', name: 'Fragen', description: 'Erklärt wie, was und wo, welche Rechnungen' }], { description: 'Hilft' }));
    assert.equal(ids('¿qué agente traduce facturas?')[0], 'es');
    assert.equal(ids('welche agent übersetzt rechnungen')[0], 'de');
    assert.equal(ids('wie übersetze ich Rechnungen?')[0], 'de');
    // Alone, or quoted, such a word is searched.
    assert.deepEqual(ids('how'), ['faq']);
    assert.deepEqual(ids('weather "how"').sort(), ['faq', 'wx']);
  });

  it('ranks "github mcp server" by its subject: "mcp" and the "server" after it are the kind of entry, which every MCP server is', () => {
    const index = createSearchIndex();
    add(index, 'github', server('github', [{ name: 'list_issues', description: 'List issues of a GitHub repository' }], 'GitHub API'), 'o', 1);
    add(index, 'bridge', agent('Bridge', [{ id: 'b', name: 'Bridge', description: 'Connects an MCP server to GitHub' }]), 'o', 2);
    add(index, 'web', agent('Web', [{ id: 'w', name: 'Web server', description: 'Serves pages' }]), 'o', 3);
    const ids = (text: string) => index.search({ text, offset: 0, limit: 10 }).hits.map((h) => h.id);
    for (const q of ['github mcp server', 'GitHub MCP servers', 'mcp server for github', 'github mcp']) assert.equal(ids(q)[0], 'github', q);
    // Alone, quoted or after a field, the words are searched; "server" without "mcp" is a subject.
    assert.deepEqual(ids('mcp server'), ['bridge', 'web']);
    assert.equal(ids('github "mcp"')[0], 'bridge');
    assert.deepEqual(ids('web server'), ['web', 'bridge']);
    // A name with the words is still named by them: "MCP Gateway", not the agent "Gateway".
    add(index, 'mcp-gateway', agent('MCP Gateway', [{ id: 'r', name: 'Route', description: 'Routes calls' }], { description: 'Routes calls' }), 'o', 4);
    add(index, 'gateway', agent('Gateway', [{ id: 'g', name: 'Gateway', description: 'The gateway of gateways' }], { description: 'A gateway' }), 'o', 5);
    assert.equal(ids('MCP Gateway')[0], 'mcp-gateway');
    assert.equal(ids('mcp-gateway')[0], 'mcp-gateway');
  });

  it('puts units matching all query words above units matching some', () => {
    const index = createSearchIndex();
    add(index, 'some', agent('Translator', [{ id: 's', name: 'Translate invoice', tags: ['translate', 'invoice'] }]));
    add(index, 'all', agent('Other', [{ id: 's', name: 'Misc', examples: ['translate invoice into Spanish'] }]));
    const hits = search(index, 'translate invoice spanish ').hits;
    assert.equal(hits[0]!.id, 'all');
    assert.ok(hits[0]!.score >= 3 && hits[1]!.score < 3, JSON.stringify(hits.map((h) => h.score)));
  });

  it('ranks the entry whose whole name the query is first, a name with a repeated word too ("Echo Echo Agent")', () => {
    const index = createSearchIndex();
    const at = 1;
    add(index, 'b-echo-echo', agent('Echo Echo Agent', [{ id: 's', name: 'Repeat' }], { description: 'Repeats what it hears.' }), 'o', at);
    // Its name is the query's words once each: the query's repeated word was dropped before the
    // whole name was looked up, so this one got the exact-name term instead.
    add(index, 'a-echo', agent('Echo Agent', [{ id: 'echo', name: 'Echo', description: 'Echo the echo', tags: ['echo'] }], { description: 'Echo echo echo.' }), 'o', at);
    const ids = (text: string) => index.search({ text, offset: 0, limit: 10 }).hits.map((h) => h.id);
    assert.deepEqual(ids('Echo Echo Agent'), ['b-echo-echo', 'a-echo']);
    assert.deepEqual(ids('Echo Agent'), ['a-echo', 'b-echo-echo']);
  });

  it('ranks the entry whose whole name the query is first, case aside, when the name is one word the query writes in camelCase ("GitHub" names "github")', () => {
    const index = createSearchIndex();
    // The server named "github" is the older: only the name can put it first.
    add(index, 'a-github', server('github', [{ name: 'list_issues', description: 'List issues in a GitHub repository' }], 'GitHub API'), 'o', 1);
    add(index, 'b-crawler', server('crawler', [{ name: 'search_github', description: 'Search GitHub for code' }], 'Crawls the web'), 'o', 2);
    add(index, 'c-weather', server('getweather', [{ name: 'forecast', description: 'Forecast for a place' }]), 'o', 1);
    add(index, 'd-tools', server('tools', [{ name: 'get_weather_now', description: 'Gets the weather now' }]), 'o', 2);
    const ids = (text: string) => index.search({ text, offset: 0, limit: 10 }).hits.map((h) => h.id);
    for (const text of ['github', 'GitHub', 'Git-Hub']) assert.deepEqual(ids(text), ['a-github', 'b-crawler'], text);
    for (const text of ['getweather', 'getWeather', 'get_weather']) assert.equal(ids(text)[0], 'c-weather', text);
  });

  it('ranks the entry whose whole name the query is first, case aside, when its name has a capital letter or "IT" of its own ("R Studio")', () => {
    const index = createSearchIndex();
    const at = 1;
    add(index, 'b-r-studio', agent('R Studio', [{ id: 's', name: 'Notebooks' }], { description: 'Notebooks for statistics.' }), 'o', at);
    add(index, 'c-it-desk', agent('IT Desk', [{ id: 's', name: 'Tickets' }], { description: 'Opens tickets.' }), 'o', at);
    add(index, 'a-studio', agent('Studio Suite', [{ id: 'studio', name: 'Studio', description: 'Studio desk for the studio', tags: ['studio', 'desk'] }], { description: 'Studio desk.' }), 'o', at);
    const first = (text: string) => index.search({ text, offset: 0, limit: 10 }).hits[0]?.id;
    assert.equal(first('R Studio'), 'b-r-studio');
    assert.equal(first('r studio'), 'b-r-studio', 'typed in lower case: "r" is no word, the rest is the name');
    assert.equal(first('IT Desk'), 'c-it-desk');
    assert.equal(first('it desk'), 'c-it-desk');
  });

  it('ranks what is named with hyphens first for the name typed joined: an agent "Co-Pilot" for "copilot", a skill or tool "E-mail Sender" for "email sender"', () => {
    // Only the name's words were its name (`co pilot`, `mail sender`), and skills' and tools'
    // names had no second reading: what said the words joined more often ranked first.
    const index = createSearchIndex();
    const at = 1;
    add(index, 'a-copilot', agent('Co-Pilot', [{ id: 's', name: 'Assist' }], { description: 'Helps.' }), 'o', at);
    add(index, 'b-tts', agent('Text-to-Speech', [{ id: 's', name: 'Speak' }], { description: 'Reads aloud.' }), 'o', at);
    add(index, 'c-skills', agent('Helpers', [{ id: 'mail', name: 'E-mail Sender', description: 'Sends.' }, { id: 'pilot', name: 'Co-Pilot', description: 'Helps.' }], { description: 'Helps.' }), 'o', at);
    add(index, 'd-tool', server('postie', [{ name: 'E-mail Sender', description: 'Sends.' }]), 'o', at);
    const says = 'copilot texttospeech email sender';
    add(index, 'z-hub', agent('Copilot Texttospeech Email Sender Hub', [{ id: 'hub', name: 'Email sender copilot texttospeech', description: `${says}, ${says}`, tags: ['copilot', 'texttospeech', 'email'], examples: [says] }], { description: says }), 'o', at);
    const matches = (text: string) => matchIds(search(index, text).hits);
    assert.deepEqual(matches('copilot').slice(0, 2).sort(), ['a-copilot/agent', 'c-skills/pilot']);
    assert.deepEqual(matches('texttospeech')[0], 'b-tts/agent');
    assert.deepEqual(matches('email sender').slice(0, 2).sort(), ['c-skills/mail', 'd-tool/E-mail Sender']);
    // As before: the name's words typed name it.
    assert.deepEqual(matches('co-pilot').slice(0, 2).sort(), ['a-copilot/agent', 'c-skills/pilot']);
    assert.deepEqual(matches('text to speech')[0], 'b-tts/agent');
    assert.deepEqual(matches('e-mail sender').slice(0, 2).sort(), ['c-skills/mail', 'd-tool/E-mail Sender']);
  });

  it('breaks ties by the place in list\'s order, newest registered first whatever the ids, then (one place: never from storage) by id', () => {
    const index = createSearchIndex();
    add(index, 'old', agent('Old', [{ id: 's', name: 'Forecast' }]), 'o', 1);
    add(index, 'new', agent('New', [{ id: 's', name: 'Forecast' }]), 'o', 10);
    add(index, 'b-same', agent('Same', [{ id: 's', name: 'Forecast' }]), 'o', 5);
    add(index, 'a-same', agent('Same', [{ id: 's', name: 'Forecast' }]), 'o', 5);
    // Registered one after the other (as in one millisecond): the later first, though its id sorts last.
    add(index, 'z-second', agent('Second', [{ id: 's', name: 'Forecast' }]), 'o', 8);
    add(index, 'a-first', agent('First', [{ id: 's', name: 'Forecast' }]), 'o', 7);
    const order = ['new', 'z-second', 'a-first', 'a-same', 'b-same', 'old'];
    assert.deepEqual(search(index, 'forecast ').hits.map((h) => h.id), order);
    assert.deepEqual(search(index, '').hits.map((h) => h.id), order, 'a search without text lists in the same order');
  });
});

describe('grouping', () => {
  it('shows at most three hits of one entry and counts the rest', () => {
    const index = createSearchIndex();
    const skills = Array.from({ length: 10 }, (_, i) => ({ id: `s${i}`, name: `Weather report ${i}` }));
    add(index, 'many', agent('Many', skills));
    add(index, 'one', agent('One', [{ id: 'x', name: 'Weather' }]));
    const page = search(index, 'weather ', undefined, 20);
    const mine = page.hits.filter((h) => h.id === 'many');
    assert.equal(mine.length, GROUP_LIMIT);
    assert.equal(mine.at(-1)!.moreInEntry, 7);
    assert.ok(mine.slice(0, -1).every((h) => h.moreInEntry === undefined));
    assert.equal(page.total, GROUP_LIMIT + 1);
    assert.ok(page.hits.some((h) => h.id === 'one'));
  });
});

describe('filters', () => {
  const index = createSearchIndex();
  add(
    index,
    'docs',
    agent(
      'Docs',
      [
        { id: 'pdf', name: 'Summarize report', tags: ['PDF', 'Documents'], inputModes: ['application/pdf'] },
        { id: 'img', name: 'Describe report image', tags: ['vision'], inputModes: ['image/png'], outputModes: ['text/markdown'] },
        { id: 'any', name: 'Report anything', tags: ['misc'] },
      ],
      {
        // The description does not say "report": with three skills matching, a fourth unit of
        // the entry would be folded by grouping.
        description: 'Document tools',
        streaming: true,
        inputModes: ['text/*'],
        outputModes: ['application/json'],
        interfaces: [
          { url: 'https://docs.example.com/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0.1' },
          { url: 'https://docs.example.com/grpc', protocolBinding: 'GRPC', protocolVersion: '0.3.0' },
        ],
      },
    ),
    'alice',
  );
  add(index, 'legacy', describeAgentCard({ name: 'Legacy report agent', description: 'Reports', url: 'https://legacy.example.com', protocolVersion: '0.3.0', capabilities: {}, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [{ id: 'r', name: 'Report', description: '', tags: ['documents'] }] }, '0.3'), 'bob');
  add(
    index,
    'files',
    server('files', [
      { name: 'read_report', annotations: { readOnlyHint: true, openWorldHint: false } },
      { name: 'delete_report' },
      { name: 'write_report', annotations: { destructiveHint: false, idempotentHint: true } },
    ]),
    'bob',
  );
  const ids = (f: SearchFilter, text = 'report '): string[] => matchIds(search(index, text, f).hits).sort();

  it('capabilities: entries offering any of them (skill ids, tool names), exactly; beside other keys, asked again, with text or none', () => {
    const entries = (f: SearchFilter, text = 'report '): string[] => [...new Set(search(index, text, f).hits.map((h) => h.id))].sort();
    assert.deepEqual(entries({ capabilities: ['r', 'write_report'] }), ['files', 'legacy']);
    for (const none of ['Report', 'READ_REPORT', 'read', 'nope']) assert.deepEqual(entries({ capabilities: [none] }), [], none);
    // Asked again, a filter's other keys are kept as a bitmap, and walks go over the owner's or
    // the tag's list: neither decides the capabilities.
    for (let i = 0; i < 3; i++) {
      for (const text of ['report ', '']) {
        assert.deepEqual(entries({ owner: 'bob', capabilities: ['r'] }, text), ['legacy'], `owner, ${i}: "${text}"`);
        assert.deepEqual(entries({ tags: ['documents'], capabilities: ['r'] }, text), ['legacy'], `tags, ${i}: "${text}"`);
        assert.deepEqual(entries({ kind: 'mcp-server', capabilities: ['r'] }, text), [], `kind, ${i}: "${text}"`);
      }
    }
    assert.equal(search(index, '', { capabilities: ['read_report', 'img'] }).total, 2, 'counted as listed');
  });

  it('capabilities: compared exactly where an entry offers so many that its capability signature has every bit', () => {
    const many = createSearchIndex();
    const skills = Array.from({ length: 300 }, (_, i) => ({ id: `cap-${i}`, name: `Name ${i}` }));
    add(many, 'many', agent('Many', [...skills, { id: '', name: 'Solo "quoted" \\ é' }], { description: 'Says "Name 7" and "tool-3"' }));
    add(many, 'tools', server('tools', Array.from({ length: 300 }, (_, i) => ({ name: `tool-${i}`, description: `Like "Name ${i}"` }))));
    const entries = (f: SearchFilter, text: string): string[] => [...new Set(search(many, text, f).hits.map((h) => h.id))].sort();
    for (const text of ['', 'name ']) {
      // Names of skills that have ids, and values quoted in descriptions, are none.
      for (const none of ['Name 7', 'Name 299', 'Solo', 'cap-300', 'tool-300', 'Tool-3']) assert.deepEqual(entries({ capabilities: [none] }, text), [], `${none}: "${text}"`);
      assert.deepEqual(entries({ capabilities: ['cap-299'] }, text), ['many'], text);
      assert.deepEqual(entries({ capabilities: ['Solo "quoted" \\ é'] }, text), ['many'], text);
      assert.deepEqual(entries({ capabilities: ['tool-299', 'Name 1'] }, text), ['tools'], text);
      assert.deepEqual(entries({ capabilities: ['tool-0', 'cap-0'], kind: 'agent' }, text), ['many'], text);
    }
  });

  it('kind and owner', () => {
    assert.deepEqual(ids({ kind: 'mcp-server' }), ['files/delete_report', 'files/read_report', 'files/write_report']);
    assert.deepEqual(ids({ owner: 'bob', kind: 'agent' }), ['legacy/agent', 'legacy/r']);
    assert.deepEqual(ids({ owner: 'nobody' }), []);
  });

  it('tags: any of the given tags, ignoring case and accents; only skills', () => {
    assert.deepEqual(ids({ tags: ['documents'] }), ['docs/pdf', 'legacy/r']);
    assert.deepEqual(ids({ tags: ['VISION', 'nope'] }), ['docs/img']);
    assert.deepEqual(ids({ tags: ['nope'] }), []);
    assert.deepEqual(ids({ tags: [] }).length, ids({}).length);
  });

  it('tags: white space, dashes, underscores, other punctuation and a change of case between a tag\'s words are alike, as for `tags:`', () => {
    const index = createSearchIndex();
    add(index, 'dash', agent('Dash', [{ id: 'd', name: 'Classify', tags: ['machine-learning'] }]));
    add(index, 'under', agent('Under', [{ id: 'u', name: 'Cluster', tags: ['Machine_Learning'] }]));
    add(index, 'space', agent('Space', [{ id: 's', name: 'Regress', tags: ['machine  learning'] }]));
    add(index, 'camel', agent('Camel', [{ id: 'c', name: 'Embed', tags: ['MachineLearning', 'XMLParser'] }]));
    add(index, 'one', agent('One', [{ id: 'o', name: 'Predict', tags: ['machinelearning', '-', 'xml-parser'] }]));
    const filtered = (tags: string[]) => search(index, '', { tags }).hits.map((h) => h.id).sort();
    const all = ['camel', 'dash', 'one', 'space', 'under'];
    for (const tag of ['machine learning', 'Machine-Learning', 'machine_learning', ' machine \u2013 learning ', 'MachineLearning', 'machinelearning']) assert.deepEqual(filtered([tag]), all, tag);
    for (const q of ['tags:"machine learning"', 'tags:MachineLearning ']) assert.deepEqual(search(index, q).hits.map((h) => h.id).sort(), all, `as the query ${q} finds them`);
    // A word with parts after a field is one tag, as the filter reads it: not a skill tagged "machine" and "deep-learning".
    add(index, 'apart', agent('Apart', [{ id: 'a', name: 'Tune', tags: ['machine', 'deep-learning'] }]));
    for (const q of ['tags:machine-learning', 'tags:Machine_Learning ']) assert.deepEqual(search(index, q).hits.map((h) => h.id).sort(), all, q);
    // The words written as one are the same tag, to the filter as to the query ("github" is "GitHub").
    assert.deepEqual(search(index, 'tags:machinelearning ').hits.map((h) => h.id).sort(), all, 'tags:machinelearning');
    assert.deepEqual(search(index, 'tags:machine ').hits.map((h) => h.id).sort(), ['apart', 'camel', 'dash', 'space', 'under'], 'one word of a tag is not the tag written as one word');
    // An acronym before a word is a word of its own, as the tokenizer reads it (HTTPServer).
    for (const tag of ['XMLParser', 'xml parser']) assert.deepEqual(filtered([tag]), ['camel', 'one'], tag);
    assert.deepEqual(filtered(['-']), ['one'], 'a tag of only a separator is still asked for as written');
    // Any punctuation between words, as the query reads it: Node.js is node-js, CI/CD ci-cd.
    add(index, 'dotted', agent('Dotted', [{ id: 'n', name: 'Run', tags: ['Node.js', 'CI/CD', 'Text-to-Speech'] }]));
    add(index, 'dashed', agent('Dashed', [{ id: 'n', name: 'Run', tags: ['node-js', 'ci-cd', 'nodejs'] }]));
    for (const tag of ['Node.js', 'node-js', 'NodeJS', 'CI/CD', 'ci_cd']) {
      assert.deepEqual(filtered([tag]), ['dashed', 'dotted'], tag);
      assert.deepEqual(search(index, `tags:${tag} `).hits.map((h) => h.id).sort(), ['dashed', 'dotted'], `tags:${tag}`);
    }
    assert.deepEqual(filtered(['text to speech']), ['dotted']);
    assert.deepEqual(filtered(['text speech']), [], 'a stop word between words is a word of the tag');
  });

  it('input and output modes: own modes, else card defaults, MIME wildcards', () => {
    assert.deepEqual(ids({ inputModes: ['application/pdf'] }), ['docs/pdf']);
    // `any` has no modes: the card default text/* accepts text/plain; legacy declares text/plain.
    assert.deepEqual(ids({ inputModes: ['text/plain'] }), ['docs/any', 'legacy/r']);
    assert.deepEqual(ids({ inputModes: ['Text/Plain; charset=utf-8'] }), ['docs/any', 'legacy/r']);
    assert.deepEqual(ids({ inputModes: ['image/*'] }), ['docs/img']);
    assert.deepEqual(ids({ outputModes: ['text/markdown'] }), ['docs/img']);
    assert.deepEqual(ids({ outputModes: ['application/json'] }), ['docs/any', 'docs/pdf']);
  });

  it('protocol binding and version (prefix on a dot boundary, one interface for both)', () => {
    assert.deepEqual(ids({ protocolBinding: 'grpc', kind: 'agent' }), ['docs/any', 'docs/img', 'docs/pdf']);
    assert.deepEqual(ids({ protocolVersion: '1.0' }), ['docs/any', 'docs/img', 'docs/pdf']);
    assert.deepEqual(ids({ protocolVersion: '0.3' }), ['docs/any', 'docs/img', 'docs/pdf', 'legacy/agent', 'legacy/r']);
    assert.deepEqual(ids({ protocolVersion: '1' }), ['docs/any', 'docs/img', 'docs/pdf']);
    assert.deepEqual(ids({ protocolVersion: '1.0.10' }), []);
    assert.deepEqual(ids({ protocolBinding: 'GRPC', protocolVersion: '1.0' }), []);
    assert.deepEqual(ids({ protocolBinding: 'MCP' }), ['files/delete_report', 'files/read_report', 'files/write_report']);
    // The binding as people write it: "JSON-RPC" (the protocol's own name), "json_rpc" found nothing.
    const jsonRpc = ids({ protocolBinding: 'JSONRPC' });
    assert.ok(jsonRpc.includes('docs/pdf') && jsonRpc.includes('legacy/r'));
    for (const spelt of ['JSON-RPC', 'json_rpc', ' json rpc ', 'Json\u2010Rpc']) assert.deepEqual(ids({ protocolBinding: spelt }), jsonRpc, spelt);
    assert.deepEqual(ids({ protocolBinding: 'JSON-RPC2' }), []);
  });

  it('streaming', () => {
    assert.deepEqual(ids({ streaming: true }), ['docs/any', 'docs/img', 'docs/pdf']);
    assert.ok(ids({ streaming: false }).includes('files/read_report'));
  });

  it('modes past the bits a skill keeps for them, and in an index saved without those bits', () => {
    // Twenty modes: a skill's mode bits (13) are shared, so they only rule skills out.
    const many = createSearchIndex();
    const modes = Array.from({ length: 20 }, (_, i) => `application/x-mode${i}`);
    add(many, 'wide', agent('Wide', modes.map((m, i) => ({ id: `s${i}`, name: `Report ${i}`, inputModes: [m], outputModes: [modes[19 - i]!] }))));
    const wideIds = (f: SearchFilter, index: SearchIndex): string[] => matchIds(search(index, 'report ', f).hits).sort();
    assert.deepEqual(wideIds({ inputModes: ['application/x-mode13'] }, many), ['wide/s13']);
    assert.deepEqual(wideIds({ inputModes: ['application/x-mode0'] }, many), ['wide/s0']);
    assert.deepEqual(wideIds({ outputModes: ['application/x-mode0'] }, many), ['wide/s19']);
    assert.deepEqual(wideIds({ inputModes: ['application/x-mode2'], outputModes: ['application/x-mode17'] }, many), ['wide/s2']);
    // An index saved before skills kept mode bits loads with them set from its pool.
    for (const saving of [index, many]) {
      const saved = saving.saveState!();
      const unitAttr = saved.parts.get('tables.unitAttr') as Int32Array;
      const asSavedBefore = unitAttr.map((a) => a & 63);
      assert.notDeepEqual(asSavedBefore, unitAttr);
      saved.parts.set('tables.unitAttr', asSavedBefore);
      const loaded = createSearchIndex();
      loaded.loadState!(saved.parts);
      saved.release();
      for (const f of [{ inputModes: ['text/plain'] }, { outputModes: ['text/markdown'] }, { inputModes: ['application/x-mode5'] }, { inputModes: ['image/*'], tags: ['vision'] }]) {
        assert.deepEqual(wideIds(f, loaded), wideIds(f, saving), JSON.stringify(f));
      }
    }
  });

  it('tool hints with MCP defaults applied; they imply mcp-server', () => {
    assert.deepEqual(ids({ readOnly: true }), ['files/read_report']);
    assert.deepEqual(ids({ readOnly: false }), ['files/delete_report', 'files/write_report']);
    // A read-only tool is not destructive and is idempotent (those hints only mean something when readOnlyHint is false).
    assert.deepEqual(ids({ destructive: true }), ['files/delete_report']);
    assert.deepEqual(ids({ destructive: false }), ['files/read_report', 'files/write_report']);
    assert.deepEqual(ids({ idempotent: false }), ['files/delete_report']);
    assert.deepEqual(ids({ openWorld: true }), ['files/delete_report', 'files/write_report']);
    assert.deepEqual(ids({ readOnly: true, kind: 'agent' }), []);
    assert.deepEqual(ids({ readOnly: true, tags: ['documents'] }), []);
  });

  it('ignores malformed filter values instead of throwing', () => {
    const bad = { kind: 'robot', tags: 'pdf', inputModes: [42], streaming: 'yes', readOnly: null } as unknown as SearchFilter;
    assert.deepEqual(ids(bad), ids({}));
  });

  it('empty text lists entries newest first, or skills/tools under a skill-level filter', () => {
    const all = search(index, '');
    assert.deepEqual(all.hits.map((h) => h.id), ['files', 'legacy', 'docs']);
    assert.ok(all.hits.every((h) => (h.match.type === 'agent' || h.match.type === 'mcp-server') && h.score === 0));
    assert.deepEqual(ids({ tags: ['documents'] }, ''), ['docs/pdf', 'legacy/r']);
    assert.deepEqual(ids({ readOnly: false }, ''), ['files/delete_report', 'files/write_report']);
    assert.deepEqual(ids({ kind: 'agent' }, ''), ['docs/agent', 'legacy/agent']);
  });
});

describe('listing steps (the AI Catalog\'s ranges)', () => {
  it('count and cut the listing newest first between two places, late arrivals, updates and removals included, whatever part is asked', () => {
    const index = createSearchIndex();
    const n = 3000;
    let seed = 7;
    const random = (below: number) => Math.floor(((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * below);
    const live = new Map<string, number>();
    // Mostly in order, some older places after newer ones (the lists' side parts), then updates (which keep the place) and removals.
    const order = Array.from({ length: n }, (_, i) => i);
    for (let k = 0; k < n / 10; k++) {
      const a = random(n);
      const b = random(n);
      [order[a], order[b]] = [order[b]!, order[a]!];
    }
    for (const i of order) {
      add(index, `e${i}`, agent(`A${i}`, []), 'alice', i + 1);
      live.set(`e${i}`, i + 1);
    }
    for (let k = 0; k < n / 5; k++) if (live.has(`e${(k * 7) % n}`)) add(index, `e${(k * 7) % n}`, agent(`Changed ${k}`, []), 'alice', ((k * 7) % n) + 1);
    for (let k = 0; k < n / 7; k++) {
      const gone = `e${random(n)}`;
      index.remove(gone);
      live.delete(gone);
    }
    assert.equal(index.size, live.size);
    const places = [...live.values()].sort((a, b) => b - a);
    for (let q = 0; q < 200; q++) {
      const below = q % 5 === 0 ? undefined : random(n + 2);
      const until = q % 3 === 0 ? undefined : random(below ?? n + 1);
      const every = 1 + random(50);
      const part = places.filter((p) => (below === undefined || p < below) && (until === undefined || p >= until));
      assert.deepEqual(index.listingSteps(every, below, until), { count: part.length, places: part.filter((_, k) => (k + 1) % every === 0) }, `every ${every} below ${below} until ${until}`);
    }
  });
});

describe('updates', () => {
  it('upsert replaces an entry: removed skills disappear, new ones appear at once', () => {
    const index = createSearchIndex();
    add(index, 'a', agent('Alpha', [{ id: 'old', name: 'Quantum teleport' }, { id: 'keep', name: 'Keep me' }]));
    assert.equal(search(index, 'teleport ').total, 1);
    add(index, 'a', agent('Alpha', [{ id: 'keep', name: 'Keep me' }, { id: 'new', name: 'Banana split' }]));
    assert.equal(search(index, 'teleport ').total, 0);
    assert.deepEqual(matchIds(search(index, 'banana ').hits), ['a/new']);
    assert.deepEqual(matchIds(search(index, 'keep ').hits), ['a/keep']);
    assert.equal(index.size, 1);
    // An agent can become an MCP server under the same id.
    add(index, 'a', server('alpha', [{ name: 'banana_split' }]));
    assert.deepEqual(matchIds(search(index, 'banana ').hits), ['a/banana_split']);
    assert.deepEqual(search(index, 'banana ', { kind: 'agent' }).hits, []);
  });

  it('remove is visible to the very next search, and unknown ids are ignored', () => {
    const index = createSearchIndex();
    add(index, 'a', agent('Alpha', [{ id: 's', name: 'Zebra crossing' }]));
    add(index, 'b', agent('Beta', [{ id: 's', name: 'Zebra stripes' }]));
    index.remove('a');
    assert.deepEqual(matchIds(search(index, 'zebra ').hits), ['b/s']);
    assert.deepEqual(search(index, '').hits.map((h) => h.id), ['b']);
    index.remove('a');
    index.remove('never');
    assert.equal(index.size, 1);
    index.remove('b');
    assert.equal(search(index, 'zebra ').total, 0);
    assert.equal(search(index, '').total, 0);
    assert.equal(index.size, 0);
  });

  it('survives heavy churn with consistent results', () => {
    const index = createSearchIndex();
    for (let round = 0; round < 30; round++) {
      for (let i = 0; i < 50; i++) {
        const skills = Array.from({ length: 1 + ((i + round) % 6) }, (_, k) => ({ id: `k${k}`, name: `Skill ${k} round${round} item${i}`, tags: [`t${k}`] }));
        add(index, `e${i}`, agent(`Entry ${i}`, skills));
      }
      for (let i = 0; i < 50; i += 7) index.remove(`e${(i + round) % 50}`);
    }
    // Only the last round's words remain: the word itself finds nothing, and as a typo it finds
    // the last round's (where the gone rounds' words took every place of its typos).
    assert.equal(search(index, '"round28" ').total, 0);
    const last = search(index, 'round29 ', undefined, 1000);
    assert.equal(search(index, 'round28 ', undefined, 1000).total, last.total);
    assert.equal(last.total, last.hits.length);
    for (const h of last.hits) assert.match(h.match.name, /round29/);
    assert.equal(index.size, search(index, '', undefined, 1000).total);
  });

  it('after removals and updates in long posting lists, answers exactly as an index built from what is left', () => {
    // Long lists keep removed entries' postings until an eighth of them is dead (./term-index.ts):
    // every answer must be the same as a fresh index's, whose lists hold none.
    const words = ['alpha', 'beta', 'gamma', 'delta', 'omega'];
    const describe = (i: number, round: number): EntryDescription =>
      agent(`Entry ${i} ${words[i % 5]}`, [
        { id: 'k', name: `${words[(i + round) % 5]} converter`, tags: [`t${i % 3}`], description: `shared words ${words[(i * 7) % 5]} pull request` },
      ]);
    const churned = createSearchIndex();
    const last = new Map<string, { description: EntryDescription; listSeq: number }>();
    const put = (id: string, description: EntryDescription): void => {
      const listSeq = nextSeq();
      add(churned, id, description, 'alice', listSeq);
      last.delete(id);
      last.set(id, { description, listSeq });
    };
    for (let i = 0; i < 2000; i++) put(`e${i}`, describe(i, 0));
    for (let i = 0; i < 2000; i += 3) {
      churned.remove(`e${i}`);
      last.delete(`e${i}`);
    }
    for (let i = 1; i < 2000; i += 5) put(`e${i}`, describe(i, 1));
    const fresh = createSearchIndex();
    for (const [id, { description, listSeq }] of last) add(fresh, id, description, 'alice', listSeq);
    assert.equal(churned.size, fresh.size);
    for (const text of ['alpha', 'beta converter', 'shared', '"pull request"', 'omega -gamma', 'entry', 'delt', 'gama', '']) {
      for (const filter of [undefined, { tags: ['t1'] }]) {
        for (const resultsPer of ['entry', 'match'] as const) {
          const q = { text, filter, offset: 0, limit: 30, resultsPer };
          assert.deepEqual(churned.searchNow(q), fresh.searchNow(q), JSON.stringify(q));
        }
      }
    }
  });
});

describe("skills' and tools' exact names", () => {
  it('are looked for only when a unit may be so named, and not found once it is removed (also after the filter grows, and after a save and load)', () => {
    // Every query of plain words read its rarest word's postings to find skills and tools named
    // as it (nameClause), whether or not one was: a cost on every search.
    const index = createSearchIndex();
    const scans = () => (index as unknown as PostingsIndex).stats.nameScans;
    add(index, 'git', server('potoroo-git', [{ name: 'create_pull_request', description: 'Opens one.' }, { name: 'The_Weather', description: 'Looks at the sky.' }]));
    add(index, 'forge', server('potoroo-forge', [{ name: 'create_pull_request_review', description: 'create pull request review: reviews a pull request, theweather style.' }]));
    const firstMatch = (from: SearchIndex, text: string) => {
      const [hit] = search(from, text).hits;
      return `${hit?.id}/${hit?.match.name}`;
    };
    let before = scans();
    for (const text of ['pull request', 'request', 'review pull', 'reviews', 'pull request create', 'looks sky']) {
      assert.ok(search(index, text).hits.length > 0, text);
      assert.equal(scans(), before, `${text}: no skill or tool has that name, no postings read to find one`);
    }
    for (const [text, named] of [
      ['createPullRequest', 'git/create_pull_request'],
      ['create pull request', 'git/create_pull_request'],
      // A word written together with a stop word is a term of its name ("The_Weather" is `weather`, 1 word long).
      ['theweather', 'git/The_Weather'],
      ['create_pull_request_review', 'forge/create_pull_request_review'],
    ]) {
      assert.equal(firstMatch(index, text!), named, text);
      assert.equal(scans(), ++before, `${text}: looked for the units so named`);
    }
    // Removed: its name stays in the filter (a needless look), but no live unit has it.
    index.remove('git');
    assert.equal(firstMatch(index, 'create_pull_request'), 'forge/create_pull_request_review');
    // Grown past its size (2,048 names): built anew from the entries, without the removed names.
    for (let i = 0; i < 700; i++) add(index, `s${i}`, server(`wombat-${i}`, [0, 1, 2].map((k) => ({ name: `burrow_${i}_${k}`, description: 'Digs.' }))));
    before = scans();
    search(index, 'create_pull_request');
    assert.equal(scans(), before, 'the removed name is forgotten once the filter is rebuilt');
    const saved = index.saveState!();
    const loaded = createSearchIndex();
    loaded.loadState!(saved.parts);
    saved.release();
    for (const from of [index, loaded]) {
      assert.equal(firstMatch(from, 'burrow_699_2'), 's699/burrow_699_2');
      assert.equal(firstMatch(from, 'create pull request review'), 'forge/create_pull_request_review');
    }
  });
});

describe('words no entry has any more', () => {
  /** A word of letters only (the tokenizer splits letters from digits), different for every n. */
  const wordOf = (n: number): string => {
    let w = 'zq';
    do {
      w += String.fromCharCode(97 + (n % 26));
      n = Math.floor(n / 26);
    } while (n > 0);
    return w;
  };
  let fresh = 0;
  /** A card of `count` words no other card has (and "weather", which the lasting ones have too; tags are not terms alone). */
  const uniqueCard = (count: number): EntryDescription => {
    const words = Array.from({ length: count }, () => wordOf(fresh++));
    return agent(`Churn ${words[0]}`, [
      { id: 'k1', name: `Weather ${words[1]}`, description: words.slice(2, count / 2).join(' '), tags: ['weather'] },
      { id: 'k2', name: words[count / 2 + 1]!, description: words.slice(count / 2 + 2).join(' '), examples: ['weather report'] },
    ]);
  };
  const lasting = (i: number): EntryDescription =>
    agent(`Lasting ${['alpha', 'beta', 'gamma'][i % 3]} agent`, [
      { id: 'w', name: 'Weather forecast', description: `Forecasts for ${['berlin', 'lisbon', 'zurich', 'zagreb'][i % 4]} and nearby towns`, tags: ['weather'] },
      { id: 'c', name: 'Currency converter', description: 'Converts euros to dollars', tags: [`t${i % 3}`] },
    ]);
  const queries = ['weather', 'alpha', 'forecast berlin', 'weathr', 'zagrab', 'conv', 'zq', '"zqa"', 'currency -dollars', 'towns', ''];
  const answers = (index: SearchIndex): IndexPage[] =>
    queries.flatMap((text) => (['entry', 'match'] as const).map((resultsPer) => index.searchNow({ text, offset: 0, limit: 30, resultsPer })));
  const stats = (index: SearchIndex) => (index as unknown as PostingsIndex).stats;
  const savedBytes = async (index: SearchIndex, file: string): Promise<number> => {
    const saved = index.saveState!();
    await writeIndexSnapshot(file, { format: SNAPSHOT_FORMAT, version: 'test', seq: 0, entries: index.size, savedAt: '' }, saved.parts);
    saved.release();
    return statSync(file).size;
  };

  it('saved by a release that kept them, are forgotten as the index loads', () => {
    const index = createSearchIndex();
    for (let i = 0; i < 20; i++) add(index, `l${i}`, lasting(i), 'alice', nextSeq());
    const saved = index.saveState!();
    // A word whose list is empty, as every removed word's was before words were forgotten.
    const parts = saved.parts;
    const grownBy = <T extends Int32Array | Uint8Array>(a: T, v: number): T => {
      const out = new (a.constructor as new (n: number) => T)(a.length + 1);
      out.set(a);
      out[a.length] = v;
      return out;
    };
    const list = (parts.get('terms.listLen') as Int32Array).length;
    parts.set('terms.terms', [...(parts.get('terms.terms') as string[]), 'zanzibar']);
    parts.set('terms.termFirst', grownBy(parts.get('terms.termFirst') as Int32Array, list));
    parts.set('terms.listSlot', grownBy(parts.get('terms.listSlot') as Uint8Array, 1));
    parts.set('terms.listNext', grownBy(parts.get('terms.listNext') as Int32Array, -1));
    for (const name of ['terms.listOff', 'terms.listLen', 'terms.listCap', 'terms.listDead']) parts.set(name, grownBy(parts.get(name) as Int32Array, 0));
    (parts.get('vocabulary.terms') as Map<string, number>).set('zanzibar', 1);
    parts.set('vocabulary.sorted', [...(parts.get('vocabulary.sorted') as string[]), 'zanzibar'].sort());
    const loaded = createSearchIndex();
    loaded.loadState!(parts);
    saved.release();
    assert.equal(stats(loaded).indexedTerms, stats(index).indexedTerms);
    assert.equal(stats(loaded).vocabularyTerms, stats(index).vocabularyTerms);
    // "zagrab" is a typo of zagreb alone again, and "zan" completes to nothing.
    for (const text of ['zagrab', 'zan', 'zanzibar']) assert.deepEqual(loaded.searchNow({ text, offset: 0, limit: 30 }), index.searchNow({ text, offset: 0, limit: 30 }), text);
  });

  it('are forgotten: the terms, the vocabulary and the saved index come back to their size, and answers are those of an index built anew', async () => {
    const dir = tempDir('a2a-registry-terms-');
    try {
      const index = createSearchIndex();
      const lastingSeqs = Array.from({ length: 300 }, () => nextSeq());
      lastingSeqs.forEach((listSeq, i) => add(index, `l${i}`, lasting(i), 'alice', listSeq));
      /** An index built anew with the lasting entries and `extra`. */
      const builtWith = (extra: { id: string; description: EntryDescription; listSeq: number }[]): SearchIndex => {
        const built = createSearchIndex();
        lastingSeqs.forEach((listSeq, i) => add(built, `l${i}`, lasting(i), 'alice', listSeq));
        for (const e of extra) add(built, e.id, e.description, 'alice', e.listSeq);
        return built;
      };
      const built = builtWith([]);
      const before = { ...stats(index) };
      const bytes = await savedBytes(index, path.join(dir, 'before.snapshot'));
      const expected = answers(built);
      // Cards of words of their own registered and unregistered, as the soak audit did (280 cards
      // of ~970 words took the saved index from 5.7 to 31.5 MB), and one card updated with new
      // words again and again. A save is being written through part of it: lists are not
      // compacted meanwhile, the words they held alone are gone from searches at once all the
      // same, and from the index afterwards.
      const churn = async (rounds: number): Promise<void> => {
        let held: ReturnType<NonNullable<SearchIndex['saveState']>> | undefined;
        for (let round = 0; round < rounds; round++) {
          if (round === 40) held = index.saveState!();
          if (round === 60) held!.release();
          add(index, `c${round}`, uniqueCard(400));
          const updated = { id: 'updated', description: uniqueCard(60), listSeq: nextSeq() };
          add(index, updated.id, updated.description, 'alice', updated.listSeq);
          if (round % 3 === 0) index.remove(`c${round}`);
          if (round % 3 === 2) {
            index.remove(`c${round - 1}`);
            index.remove(`c${round}`);
            if (round === 50) {
              const now = builtWith([updated]);
              assert.equal(stats(index).vocabularyTerms, stats(now).vocabularyTerms);
              assert.deepEqual(answers(index), answers(now));
              // Saved now (the first save still held), the dead lists are in the state: the
              // index loaded from it forgets their words at once too, and frees them at its
              // first write.
              const second = index.saveState!();
              const file = path.join(dir, 'second.snapshot');
              await writeIndexSnapshot(file, { format: SNAPSHOT_FORMAT, version: 'test', seq: 0, entries: index.size, savedAt: '' }, second.parts);
              second.release();
              const read = await readIndexSnapshot(file, () => undefined);
              assert.ok(read.ok);
              const loaded = createSearchIndex();
              loaded.loadState!(read.state);
              assert.equal(stats(loaded).vocabularyTerms, stats(now).vocabularyTerms);
              assert.deepEqual(answers(loaded), answers(now));
              add(loaded, 'updated', updated.description, 'alice', updated.listSeq);
              assert.equal(stats(loaded).indexedTerms, stats(now).indexedTerms);
            }
          }
        }
        index.remove('updated');
      };
      const check = async (file: string): Promise<number> => {
        assert.equal(index.size, 300);
        assert.equal(stats(index).indexedTerms, before.indexedTerms);
        assert.equal(stats(index).vocabularyTerms, before.vocabularyTerms);
        // The gone words find nothing, not even as prefixes or typos of each other.
        for (const gone of [wordOf(7), wordOf(40_000), `"${wordOf(12_345)}"`, 'zqab*', 'churn']) assert.equal(index.searchNow({ text: gone, offset: 0, limit: 10 }).total, 0, gone);
        assert.deepEqual(answers(index), expected);
        return savedBytes(index, file);
      };
      await churn(120);
      const once = await check(path.join(dir, 'once.snapshot'));
      const words = fresh;
      await churn(120);
      const twice = await check(path.join(dir, 'twice.snapshot'));
      assert.ok(words > 50_000);
      // The saved index carries none of the gone words (kept, each took about 100 bytes): what the
      // churn leaves is room in arrays sized for the most they held at once (two cards' lists,
      // posting room) and unit slots, reused once 65,536 of them are garbage.
      assert.ok(once < bytes + 1_000_000, `saved index ${bytes} bytes before the churn, ${once} after`);
      assert.ok(twice - once < 4 * words, `saved index ${once} bytes after ${words} words churned, ${twice} after as many more`);
      const read = await readIndexSnapshot(path.join(dir, 'twice.snapshot'), () => undefined);
      assert.ok(read.ok);
      assert.equal((read.state.get('terms.terms') as string[]).length, before.indexedTerms);
      assert.equal((read.state.get('vocabulary.sorted') as string[]).length + (read.state.get('vocabulary.pending') as string[]).length, before.vocabularyTerms);
      const loaded = createSearchIndex();
      loaded.loadState!(read.state);
      assert.equal(stats(loaded).indexedTerms, before.indexedTerms);
      assert.deepEqual(answers(loaded), expected);
      // Words used again after they were forgotten are found again, in the loaded index too.
      for (const target of [index, loaded]) {
        add(target, 'back', agent('Back again', [{ id: 'k', name: `Weather ${wordOf(7)}`, description: wordOf(12_345) }]));
        assert.deepEqual(
          target.searchNow({ text: wordOf(12_345), offset: 0, limit: 10, resultsPer: 'match' }).hits.map((h) => `${h.id}/${h.match.id}`),
          ['back/k'],
        );
        assert.equal(target.searchNow({ text: `${wordOf(12_345).slice(0, 4)}*`, offset: 0, limit: 10 }).total, 1);
      }
    } finally {
      removeTempDir(dir);
    }
  });
});

describe('attribute values no entry has any more', () => {
  const stats = (index: SearchIndex) => (index as unknown as PostingsIndex).stats;
  const snapshotMeta = (index: SearchIndex) => ({ format: SNAPSHOT_FORMAT, version: 'test', seq: 0, entries: index.size, savedAt: '' });
  const rest = (binding: string, version: string): Json[] => [{ url: 'https://x.example.com/a2a', protocolBinding: binding, protocolVersion: version }];
  let fresh = 0;
  /**
   * A card whose owner, tags (beside "weather"), modes (beside text/plain) and interface list are
   * its own, as a token holder's free text can make them.
   */
  const ownCard = (): { owner: string; description: EntryDescription; filters: SearchFilter[] } => {
    const o = `v${(fresh++).toString(36)}`;
    return {
      owner: `owner-${o}`,
      // A filter by each value of its own.
      filters: [{ owner: `owner-${o}` }, { tags: [`alpha-${o}`] }, { inputModes: [`audio/x-${o}`] }, { outputModes: [`image/x-${o}`] }, { protocolBinding: `BIND-${o}` }],
      description: agent(
        `Churn ${o}`,
        [
          { id: 'k1', name: 'Weather now', tags: ['weather', `alpha-${o}`, `beta-${o}`], inputModes: [`application/x-${o}`, 'text/plain'], outputModes: [`image/x-${o}`] },
          { id: 'k2', name: 'Weather later', tags: [`gamma-${o}`] },
        ],
        { interfaces: rest(`BIND-${o}`, `9.${o}`), inputModes: [`audio/x-${o}`] },
      ),
    };
  };
  const lasting = (i: number): { owner: string; description: EntryDescription } => ({
    owner: ['alice', 'bob', 'carol'][i % 3]!,
    description:
      i % 5 === 4
        ? server(`lasting${i}`, [{ name: 'weather_now', annotations: { readOnlyHint: i % 2 === 0 } }])
        : agent(
            `Lasting ${i}`,
            [
              { id: 'w', name: 'Weather forecast', tags: ['weather', `t${i % 4}`], inputModes: i % 2 ? ['text/plain'] : ['application/json'] },
              { id: 'c', name: 'Currency converter', tags: ['money'], outputModes: ['image/png'] },
            ],
            { interfaces: [rest('JSONRPC', '1.0'), rest('GRPC', '0.3'), rest('HTTP+JSON', '1.0.1')][i % 3], streaming: i % 2 === 0 },
          ),
  });
  // The churn's first cards' values among them (v0, v1: gone, or taken by others since).
  const filters: (SearchFilter | undefined)[] = [
    undefined,
    { tags: ['weather'] },
    { tags: ['t1', 'money'] },
    { tags: ['alpha-v1'] },
    { tags: ['gamma-v0', 't2'] },
    { owner: 'alice' },
    { owner: 'owner-v1' },
    { inputModes: ['text/plain'] },
    { inputModes: ['application/*'] },
    { inputModes: ['audio/*'] },
    { outputModes: ['image/*'] },
    { outputModes: ['image/x-v0'] },
    { protocolBinding: 'GRPC' },
    { protocolBinding: 'bind-v1' },
    { protocolVersion: '1.0' },
    { protocolVersion: '9' },
    { tags: ['weather'], inputModes: ['text/*'], owner: 'bob' },
    { kind: 'mcp-server', readOnly: true },
  ];
  const answers = (index: SearchIndex, asked = filters): IndexPage[] =>
    asked.flatMap((filter) =>
      ['', 'weather'].flatMap((text) => (['entry', 'match'] as const).map((resultsPer) => index.searchNow({ text, filter, offset: 0, limit: 50, resultsPer }))),
    );
  const saveAndLoad = async (index: SearchIndex, file: string): Promise<{ loaded: SearchIndex; parts: Map<string, unknown> }> => {
    const saved = index.saveState!();
    await writeIndexSnapshot(file, snapshotMeta(index), saved.parts);
    saved.release();
    const read = await readIndexSnapshot(file, () => undefined);
    assert.ok(read.ok);
    const loaded = createSearchIndex({ filterBitmapsAbove: 0 });
    loaded.loadState!(read.state);
    return { loaded, parts: read.state };
  };
  const definedCount = (parts: Map<string, unknown>, name: string): number => (parts.get(name) as (string | undefined)[]).filter((v) => v !== undefined).length;

  it('are forgotten: dictionaries and listing orders back to the live values, filters answering as an index built anew, during and after churn and after a save and load', async () => {
    const dir = tempDir('a2a-registry-attributes-');
    try {
      // Kept filter bitmaps from a filter's second search on: they must stay right as ids are
      // freed and used again by other values.
      const index = createSearchIndex({ filterBitmapsAbove: 0 });
      const lastingSeqs = Array.from({ length: 40 }, () => nextSeq());
      const fill = (target: SearchIndex): void => lastingSeqs.forEach((listSeq, i) => add(target, `l${i}`, lasting(i).description, lasting(i).owner, listSeq));
      fill(index);
      const live = new Map<string, { owner: string; description: EntryDescription; filters: SearchFilter[]; listSeq: number }>();
      /** The filters, and those by the live churned cards' own values. */
      const asked = (): (SearchFilter | undefined)[] => [...filters, ...[...live.values()].flatMap((e) => e.filters)];
      /** An index built anew with the lasting entries and the live churned ones. */
      const builtNow = (): SearchIndex => {
        const built = createSearchIndex();
        fill(built);
        for (const [id, e] of live) add(built, id, e.description, e.owner, e.listSeq);
        return built;
      };
      const put = (target: SearchIndex, id: string): void => {
        const e = { ...ownCard(), listSeq: nextSeq() };
        live.set(id, e);
        add(target, id, e.description, e.owner, e.listSeq);
      };
      const drop = (target: SearchIndex, id: string): void => {
        live.delete(id);
        target.remove(id);
      };
      const built = builtNow();
      const expected = answers(built);
      assert.deepEqual(answers(index), expected);
      // Cards of values of their own registered and, five rounds later, unregistered; one card
      // updated with new values every round (its old ones released as the new are counted).
      for (let round = 0; round < 120; round++) {
        put(index, `c${round}`);
        put(index, 'updated');
        if (round >= 5) drop(index, `c${round - 5}`);
        if (round % 40 === 20) {
          const now = builtNow();
          assert.deepEqual(answers(index, asked()), answers(now, asked()), `round ${round}`);
          assert.deepEqual(stats(index).listingLists, stats(now).listingLists);
          assert.deepEqual(
            Object.values(stats(index).attributes).map((d) => d.values),
            Object.values(stats(now).attributes).map((d) => d.values),
          );
        }
        if (round === 60) {
          // Saved mid-churn: free ids below live ones, saved as such; loaded, they are used again.
          assert.ok(stats(index).attributes.tags.ids > stats(index).attributes.tags.values, 'free tag ids below live ones');
          const { loaded, parts } = await saveAndLoad(index, path.join(dir, 'mid.snapshot'));
          assert.ok((parts.get('attrs.tags') as unknown[]).includes(undefined), 'free tag ids are saved as free');
          assert.deepEqual(answers(loaded, asked()), answers(builtNow(), asked()));
          const bound = stats(loaded).attributes.tags.ids;
          put(loaded, 'extra');
          assert.equal(stats(loaded).attributes.tags.ids, bound, 'a freed tag id is used again');
          assert.deepEqual(answers(loaded, asked()), answers(builtNow(), asked()));
          live.delete('extra');
        }
      }
      for (let round = 115; round < 120; round++) drop(index, `c${round}`);
      drop(index, 'updated');
      assert.equal(index.size, 40);
      // Every churned value gone, its id too (they were above the lasting ones).
      assert.deepEqual(stats(index).attributes, stats(built).attributes);
      assert.deepEqual(stats(index).listingLists, stats(built).listingLists);
      assert.deepEqual(answers(index), expected);
      const { loaded, parts } = await saveAndLoad(index, path.join(dir, 'after.snapshot'));
      for (const [part, name] of [['attrs.owners', 'owners'], ['attrs.tags', 'tags'], ['attrs.modes', 'modes'], ['attrs.profileIds', 'interfaceLists']] as const) {
        assert.equal((parts.get(part) as unknown[]).length, stats(built).attributes[name].values, `${part}: only the live values are saved`);
      }
      assert.deepEqual(stats(loaded).attributes, stats(built).attributes);
      assert.deepEqual(stats(loaded).listingLists, stats(built).listingLists);
      assert.deepEqual(answers(loaded), expected);
    } finally {
      removeTempDir(dir);
    }
  });

  it('an id freed and used again for another value matches only the entries that have that value, kept filter bitmaps too', () => {
    const index = createSearchIndex({ filterBitmapsAbove: 0 });
    add(index, 'keep', agent('Keeper', [{ id: 'k', name: 'Weather forecast', tags: ['weather'] }]), 'alice');
    const old = ownCard();
    add(index, 'old', old.description, old.owner);
    const ids = (filter: SearchFilter): string[] => index.searchNow({ text: '', filter, offset: 0, limit: 10 }).hits.map((h) => h.id);
    // Asked twice: each filter keeps a bitmap (but the tag's: its list is walked alone).
    for (let i = 0; i < 2; i++) for (const f of old.filters) assert.deepEqual(ids(f), ['old'], JSON.stringify(f));
    const kept = stats(index).filterBitmaps;
    assert.equal(kept, old.filters.length - 1);
    const before = stats(index).attributes;
    index.remove('old');
    const next = ownCard();
    add(index, 'new', next.description, next.owner);
    // The new card's values took the old ones' ids: no bound grew.
    assert.deepEqual(stats(index).attributes, before);
    for (const f of old.filters) assert.deepEqual(ids(f), [], JSON.stringify(f));
    for (const f of next.filters) assert.deepEqual(ids(f), ['new'], JSON.stringify(f));
    assert.deepEqual(ids({ tags: ['weather'] }).sort(), ['keep', 'new']);
    // The old values back, under other ids: their filters' bitmaps (kept by value) find them again.
    add(index, 'old', old.description, old.owner);
    for (let i = 0; i < 2; i++) for (const f of old.filters) assert.deepEqual(ids(f), ['old'], JSON.stringify(f));
    assert.equal(stats(index).filterBitmaps, kept, 'one bitmap a filter');
  });

  it('a mode filter reads the skills\' modes while a mode id is 13 or more, however few modes are left', () => {
    // Mode ids 0-13, then all but 0 and 13 forgotten: two modes, ids 0 and 13, which share a
    // skill's mode bit (id modulo 13): the bit alone must not decide.
    const index = createSearchIndex();
    const modes = Array.from({ length: 13 }, (_, i) => `application/m${i}`);
    const out = ['application/m0'];
    add(index, 'many', agent('Many modes', [{ id: 'k', name: 'Convert', inputModes: modes, outputModes: out }]));
    add(index, 'two', agent('Two modes', [{ id: 'k13', name: 'Convert', inputModes: ['application/m13'], outputModes: out }, { id: 'k0', name: 'Convert', inputModes: out, outputModes: out }]));
    index.remove('many');
    assert.deepEqual(stats(index).attributes.modes, { values: 2, ids: 14 });
    const page = index.searchNow({ text: 'convert', filter: { inputModes: ['application/m0'] }, offset: 0, limit: 10, resultsPer: 'match' });
    assert.deepEqual(matchIds(page.hits), ['two/k0']);
  });

  it('saved by a release that kept them, are forgotten as the index loads', () => {
    const index = createSearchIndex();
    for (let i = 0; i < 20; i++) add(index, `l${i}`, lasting(i).description, lasting(i).owner);
    const saved = index.saveState!();
    const parts = saved.parts;
    // Values no entry has, with an owner's and a tag's (empty) listing order, as format 23 kept them.
    const grown = (name: string, value: unknown): void => void parts.set(name, [...(parts.get(name) as unknown[]), value]);
    grown('attrs.owners', 'gone-owner');
    grown('attrs.tags', 'gonetag');
    grown('attrs.modes', 'audio/gone');
    grown('attrs.profileIds', JSON.stringify([['gonebinding'], ['1.0']]));
    grown('attrs.profiles', { bindings: ['gonebinding'], versions: ['1.0'] });
    for (const [name, dictionary] of [['recency.owners', 'attrs.owners'], ['recency.tags', 'attrs.tags']] as const) {
      const shape = parts.get(`${name}.shape`) as Int32Array;
      const ids = (parts.get(dictionary) as unknown[]).length;
      const out = new Int32Array(ids * 3).fill(-1);
      out.set(shape);
      out.set([0, 0, 0], (ids - 1) * 3);
      parts.set(`${name}.shape`, out);
    }
    const loaded = createSearchIndex();
    loaded.loadState!(parts);
    saved.release();
    assert.deepEqual(stats(loaded).attributes, stats(index).attributes);
    assert.deepEqual(stats(loaded).listingLists, stats(index).listingLists);
    const gone: SearchFilter[] = [{ owner: 'gone-owner' }, { tags: ['gonetag'] }, { inputModes: ['audio/*'] }, { protocolBinding: 'gonebinding' }];
    assert.deepEqual(answers(loaded, [...gone, ...filters]), answers(index, [...gone, ...filters]));
    // Its save has none of them.
    const [again, original] = [loaded.saveState!(), index.saveState!()];
    for (const name of ['attrs.owners', 'attrs.tags', 'attrs.modes', 'attrs.profileIds']) assert.equal(definedCount(again.parts, name), definedCount(original.parts, name), name);
    again.release();
    original.release();
  });

  it('counted by a write that fails midway, are released, and the index still saves and loads', () => {
    const index = createSearchIndex({ filterBitmapsAbove: 0 });
    for (let i = 0; i < 6; i++) add(index, `l${i}`, lasting(i).description, lasting(i).owner);
    const before = stats(index).attributes;
    // Its owner, interface list, first skill's tags and modes counted, then its second skill's
    // tags are not a list: the upsert throws, at the last entry number (never committed).
    const broken = agent(
      'Broken',
      [
        { id: 'k1', name: 'Weather now', tags: ['weather', 'brokentag'], inputModes: ['audio/x-broken'] },
        { id: 'k2', name: 'Weather later', tags: ['x'] },
      ],
      { interfaces: rest('BIND-broken', '9.9') },
    );
    (broken.skills[1] as unknown as { tags: unknown }).tags = 7;
    assert.throws(() => add(index, 'broken', broken, 'owner-broken'), TypeError);
    assert.equal(index.size, 6);
    assert.deepEqual(stats(index).attributes, before, 'nothing the failed write counted is kept');
    const saved = index.saveState!();
    const loaded = createSearchIndex();
    loaded.loadState!(saved.parts);
    saved.release();
    assert.deepEqual(answers(loaded), answers(index));
    add(loaded, 'after', lasting(7).description, 'owner-after');
    assert.equal(loaded.size, 7);
  });
});

describe('limits', () => {
  it('indexes at most MAX_UNITS_PER_ENTRY units of one huge entry, without failing', async () => {
    const { MAX_UNITS_PER_ENTRY } = await import('../src/search/tables.js');
    const index = createSearchIndex();
    const tools = Array.from({ length: MAX_UNITS_PER_ENTRY + 50 }, (_, i) => ({ name: `tool_${i}_widget` }));
    add(index, 'huge', server('huge', tools));
    add(index, 'small', server('small', [{ name: 'widget_maker' }]));
    const page = search(index, 'widget ', undefined, 100);
    assert.equal(page.total, 1 + GROUP_LIMIT);
    assert.equal(page.hits.find((h) => h.id === 'huge' && h.moreInEntry)?.moreInEntry, MAX_UNITS_PER_ENTRY - 1 - GROUP_LIMIT);
    // Tools past the limit are not indexed: their own words find nothing.
    assert.equal(search(index, `${MAX_UNITS_PER_ENTRY + 10} `).total, 0);
    assert.deepEqual(matchIds(search(index, `${MAX_UNITS_PER_ENTRY - 10} `).hits), [`huge/tool_${MAX_UNITS_PER_ENTRY - 10}_widget`]);
    index.remove('huge');
    assert.deepEqual(matchIds(search(index, 'widget ').hits), ['small/widget_maker']);
  });
});

// Also with the bitmaps of filters asked for again (used from a filter's second search on, by
// every search): kept up to date as health changes, and hiding long-unhealthy entries still applies.
for (const [suffix, options] of [['', {}], [', with kept filter bitmaps', { filterBitmapsAbove: 0 }]] as const) {
  describe(`health (issue 16)${suffix}`, () => {
    const index = createSearchIndex(options);
    const at = (iso: string) => Date.parse(iso);
    const health = (status: 'ok' | 'unreachable' | 'invalid', since: string) => ({ status, since, checkedAt: since, failures: status === 'ok' ? 0 : 1 });
    const grpc = [{ url: 'https://x.example.com/grpc', protocolBinding: 'GRPC', protocolVersion: '1.0' }];
    index.upsert({ id: 'up', owner: 'alice', listSeq: nextSeq(), description: agent('Numbat up', [], { interfaces: grpc }), health: health('ok', '2026-01-01T00:00:00Z') });
    index.upsert({ id: 'down-long', owner: 'alice', listSeq: nextSeq(), description: agent('Numbat down long', [], { interfaces: grpc }), health: health('unreachable', '2026-01-01T00:00:00Z'), drift: true });
    index.upsert({ id: 'down-new', owner: 'bob', listSeq: nextSeq(), description: agent('Numbat down new', []), health: health('invalid', '2026-01-02T00:00:00Z') });
    index.upsert({ id: 'unknown', owner: 'bob', listSeq: nextSeq(), description: agent('Numbat never checked', [], { interfaces: grpc }) });
    const ids = (filter?: SearchFilter, hideUnhealthyBefore?: number, text = 'numbat') =>
      index.search({ text, filter, offset: 0, limit: 50, hideUnhealthyBefore }).hits.map((h) => h.id).sort();

    it('filters by status; entries never checked match no status', () => {
      assert.deepEqual(ids({ health: 'ok' }), ['up']);
      assert.deepEqual(ids({ health: 'unreachable' }), ['down-long']);
      assert.deepEqual(ids({ health: 'invalid' }), ['down-new']);
      assert.deepEqual(ids({ health: 'any' }), ['down-long', 'down-new', 'unknown', 'up']);
      assert.deepEqual(ids({ health: 'ok' }, undefined, ''), ['up'], 'listing too');
    });

    it('combines with other entry filters (the health bits do not disturb the interface profile)', () => {
      assert.deepEqual(ids({ protocolBinding: 'GRPC' }), ['down-long', 'unknown', 'up']);
      assert.deepEqual(ids({ protocolBinding: 'grpc', health: 'ok' }), ['up']);
      assert.deepEqual(ids({ owner: 'bob', health: 'invalid' }), ['down-new']);
      assert.deepEqual(ids({ kind: 'mcp-server', health: 'ok' }), []);
    });

    it('hides entries unhealthy since before the cut-off unless a health is asked for', () => {
      const cutoff = at('2026-01-01T12:00:00Z');
      assert.deepEqual(ids(undefined, cutoff), ['down-new', 'unknown', 'up']);
      assert.deepEqual(ids({ protocolBinding: 'GRPC' }, cutoff), ['unknown', 'up']);
      assert.deepEqual(ids({ health: 'any' }, cutoff), ['down-long', 'down-new', 'unknown', 'up']);
      assert.deepEqual(ids({ health: 'unreachable' }, cutoff), ['down-long']);
      assert.deepEqual(ids(undefined, at('2026-01-03T00:00:00Z')), ['unknown', 'up']);
    });

    it('hits carry health and drift; an update replaces them', () => {
      const hit = index.search({ text: 'numbat down long', offset: 0, limit: 1 }).hits[0]!;
      assert.deepEqual(hit.health, health('unreachable', '2026-01-01T00:00:00Z'));
      assert.equal(hit.drift, true);
      // (Asked for again before the change: with bitmaps, its bitmap is kept from here on.)
      assert.deepEqual(ids({ health: 'ok' }), ['up']);
      index.upsert({ id: 'down-long', owner: 'alice', listSeq: nextSeq(), description: agent('Numbat down long', [], { interfaces: grpc }), health: health('ok', '2026-01-05T00:00:00Z') });
      assert.deepEqual(ids({ health: 'ok' }), ['down-long', 'up']);
      assert.deepEqual(ids(undefined, at('2026-01-03T00:00:00Z')), ['down-long', 'unknown', 'up']);
      index.remove('down-new');
      assert.deepEqual(ids({ health: 'invalid' }), []);
    });

    it('hides by when the failures began, whatever their kinds, not by when the status changed', () => {
      // Invalid since the 2nd, failing since the 1st (unreachable then).
      const flapping = { ...health('invalid', '2026-01-02T00:00:00Z'), failures: 3, failingSince: '2026-01-01T00:00:00Z' };
      index.upsert({ id: 'flapping', owner: 'alice', listSeq: nextSeq(), description: agent('Numbat flapping', []), health: flapping });
      const cutoff = at('2026-01-01T12:00:00Z');
      assert.deepEqual(ids(undefined, cutoff), ['down-long', 'unknown', 'up']);
      assert.deepEqual(ids({ health: 'invalid' }, cutoff), ['flapping']);
      assert.deepEqual(index.search({ text: 'numbat flapping', offset: 0, limit: 1, filter: { health: 'any' } }).hits[0]!.health, flapping);
      index.remove('flapping');
    });
  });
}

describe('kept filter bitmaps of tags that share signature bits', () => {
  it('stay apart: a filter on one tag never answers with the units of another', () => {
    // Tag ids past 64 share the entries' signature bits (id % 64) with earlier ones; the kept
    // bitmaps test each skill's own tags, so each tag's must be its own.
    const index = createSearchIndex({ filterBitmapsAbove: 0 });
    for (let t = 0; t < 70; t++) {
      index.upsert({
        id: `a${t}`,
        owner: 'alice',
        listSeq: nextSeq(),
        description: agent(`Quokka ${t}`, [
          { id: 'one', name: 'Quokka skill', tags: [`tag${t}`] },
          { id: 'two', name: 'Quokka skill', tags: ['shared'] },
        ]),
      });
    }
    const skillsWith = (tag: string) =>
      index
        .search({ text: 'quokka', filter: { tags: [tag] }, offset: 0, limit: 100, resultsPer: 'match' })
        .hits.map((h) => `${h.id}/${h.match?.id}`)
        .sort();
    // Of 71 tags, some pairs share bits (ids 64 apart). Each is asked twice, so that its
    // bitmap is kept and then used.
    for (let t = 0; t < 70; t++) {
      assert.deepEqual(skillsWith(`tag${t}`), [`a${t}/one`]);
      assert.deepEqual(skillsWith(`tag${t}`), [`a${t}/one`], `tag${t}, from its kept bitmap`);
    }
    assert.equal(skillsWith('shared').length, 70);
  });
});

describe('kept filter bitmaps within their byte budget', () => {
  type Stats = { filterBitmaps: number; filterVerdicts: number; filterBitmapBytes: number; filterBitmapsBuilt: number };
  const statsOf = (index: SearchIndex): Stats => (index as unknown as { stats: Stats }).stats;
  /** 300 entries; each skill has one of 11 tags, every third entry streams. */
  const fill = (...indexes: SearchIndex[]): void => {
    for (let t = 0; t < 300; t++) {
      const entry = {
        id: `w${t}`,
        owner: `owner${t % 7}`,
        listSeq: nextSeq(),
        description: agent(`Wombat ${t}`, [{ id: 's', name: 'Wombat skill', tags: [`tag${t % 11}`] }], { streaming: t % 3 === 0 }),
      };
      for (const index of indexes) index.upsert(entry);
    }
  };
  const tagFilters: SearchFilter[] = Array.from({ length: 11 }, (_, t) => ({ tags: [`tag${t}`] }));

  it('keep every entry bitmap that fits before any units\' verdicts, and search alike', () => {
    // Room for the 13 entry bitmaps (172 bytes each at 300 entries) and two of the 11 tag
    // filters' units' verdicts (738 bytes each: 16 bits an entry number), not three.
    const budget = 13 * 172 + 2 * 738 + 100;
    const kept = createSearchIndex({ filterBitmapsAbove: 0, filterBitmapBytes: budget });
    const plain = createSearchIndex({ filterBitmaps: 0 });
    fill(kept, plain);
    const filters: SearchFilter[] = [...tagFilters, { streaming: true }, { kind: 'agent' }];
    for (let round = 0; round < 3; round++) {
      for (const filter of filters) {
        const query = { text: 'wombat', filter, offset: 0, limit: 50 };
        assert.deepEqual(kept.search(query), plain.search(query), JSON.stringify(filter));
        assert.ok(statsOf(kept).filterBitmapBytes <= budget, `${statsOf(kept).filterBitmapBytes} bytes kept`);
      }
    }
    const stats = statsOf(kept);
    assert.equal(stats.filterBitmaps, filters.length, 'every entry bitmap is kept');
    assert.equal(stats.filterVerdicts, 2, "two filters kept their units' verdicts");
  });

  it('do not push each other out when more filters are asked for in turn than fit', () => {
    // Four bitmaps for eleven filters asked for in turn, in one order then the other: the first
    // four asked for twice keep theirs and the others search without one. Dropping the least
    // recently used would build every filter's bitmap again each round, only for it to be
    // dropped before its next search; so would letting a filter asked for once more push out a
    // kept one (in the middle of a round, those asked already are one ahead).
    const kept = createSearchIndex({ filterBitmapsAbove: 0, filterBitmaps: 4 });
    const plain = createSearchIndex({ filterBitmaps: 0 });
    fill(kept, plain);
    const builtAfter: number[] = [];
    for (let round = 0; round < 6; round++) {
      for (const filter of round % 2 === 0 ? tagFilters : [...tagFilters].reverse()) {
        const query = { text: 'wombat', filter, offset: 0, limit: 50 };
        assert.deepEqual(kept.search(query), plain.search(query), JSON.stringify(filter));
      }
      builtAfter.push(statsOf(kept).filterBitmapsBuilt);
    }
    assert.deepEqual(builtAfter, [0, 4, 4, 4, 4, 4]);
    assert.equal(statsOf(kept).filterBitmaps, 4);
  });

  it('give way to a filter asked for at least twice as often', () => {
    const kept = createSearchIndex({ filterBitmapsAbove: 0, filterBitmaps: 2 });
    fill(kept);
    const ask = (filter: SearchFilter) => kept.search({ text: 'wombat', filter, offset: 0, limit: 10 });
    const [a, b, c] = tagFilters as [SearchFilter, SearchFilter, SearchFilter];
    ask(a), ask(a), ask(b), ask(b);
    assert.equal(statsOf(kept).filterBitmapsBuilt, 2, 'a and b are kept');
    // c asked for twice: no more than a and b, so it does not push either out.
    ask(c), ask(c);
    assert.equal(statsOf(kept).filterBitmapsBuilt, 2);
    // c asked for four times, twice as often as a and b: a, the least recently used, goes.
    ask(c), ask(c);
    assert.equal(statsOf(kept).filterBitmapsBuilt, 3);
    assert.equal(statsOf(kept).filterBitmaps, 2);
  });
});

describe('kept unit verdicts of a skill-level filter', () => {
  const skills = (name: string, count: number, tagged: (k: number) => boolean) =>
    Array.from({ length: count }, (_, k) => ({ id: `s${k}`, name: `${name} skill ${k}`, tags: tagged(k) ? ['burrow'] : [] }));
  const pair = () => {
    const kept = createSearchIndex({ filterBitmapsAbove: 0 });
    const plain = createSearchIndex({ filterBitmaps: 0 });
    const upsert = (entry: Parameters<SearchIndex['upsert']>[0]) => {
      kept.upsert(entry);
      plain.upsert(entry);
    };
    const remove = (id: string) => {
      kept.remove(id);
      plain.remove(id);
    };
    const same = (text: string) => {
      const query = { text, filter: { tags: ['burrow'] }, offset: 0, limit: 100, resultsPer: 'match' as const };
      const page = kept.search(query);
      assert.deepEqual(page, plain.search(query), text);
      return page.hits.map((h) => `${h.id}/${h.match?.id}`).sort();
    };
    return { upsert, remove, same };
  };

  it('stay true when the unit blocks move (compaction after many updates), past the kept ordinals too', () => {
    const { upsert, same } = pair();
    const churn = (n: number) => ({ id: 'churn', owner: 'alice', listSeq: nextSeq(), description: agent(`Wombat ${n}`, skills('wombat', 1000, () => true)) });
    // More entries than the changes below, so that the bitmap is brought up to date, not built anew.
    for (let i = 0; i < 500; i++) upsert({ id: `other${i}`, owner: 'bob', listSeq: nextSeq(), description: agent(`Other ${i}`, []) });
    upsert(churn(0));
    // One skill past the kept ordinals (tested each time), one within them (kept).
    upsert({ id: 'keep', owner: 'alice', listSeq: nextSeq(), description: agent('Numbat', skills('numbat', 1000, (k) => k === 500)) });
    upsert({ id: 'few', owner: 'alice', listSeq: nextSeq(), description: agent('Numbat few', skills('numbat', 8, (k) => k === 5)) });
    // Kept from the second search on: the entries' verdicts are recorded.
    for (let r = 0; r < 3; r++) assert.ok(same('wombat').length > 0);
    assert.deepEqual(same('numbat'), ['few/s5', 'keep/s500']);
    // Each update leaves churn's old block behind; past 65,536 such slots, the blocks are
    // compacted and the others' units move to slots that were churn's.
    for (let n = 1; n <= 70; n++) upsert(churn(n));
    assert.deepEqual(same('numbat'), ['few/s5', 'keep/s500']);
    assert.ok(same('wombat').length > 0);
  });

  it('are forgotten when an entry number is used again for another entry', () => {
    const { upsert, remove, same } = pair();
    for (let i = 0; i < 50; i++) upsert({ id: `other${i}`, owner: 'bob', listSeq: nextSeq(), description: agent(`Other ${i}`, []) });
    upsert({ id: 'a', owner: 'alice', listSeq: nextSeq(), description: agent('Wombat a', skills('wombat', 6, (k) => k === 1)) });
    // Kept from the second search on: a's verdicts are recorded (its skill s1 passes).
    for (let r = 0; r < 3; r++) assert.deepEqual(same('wombat'), ['a/s1']);
    // a's number has no postings left (short lists are compacted at once): b gets it.
    remove('a');
    upsert({ id: 'b', owner: 'alice', listSeq: nextSeq(), description: agent('Wombat b', skills('wombat', 6, (k) => k === 3)) });
    assert.deepEqual(same('wombat'), ['b/s3']);
  });
});
