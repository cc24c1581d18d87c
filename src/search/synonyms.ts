/**
 * The operator's synonym file (REGISTRY_SYNONYMS), in the format of Solr's and Elasticsearch's
 * synonyms.txt, so existing files work as they are:
 *
 *   # comment
 *   billing, invoicing, invoice         equivalent: each finds the others
 *   tax => vat, sales tax               one-way: "tax" also finds "vat" and "sales tax"
 *   ml, machine learning                a term of several words is matched as a phrase
 *
 * Terms are normalised like indexed text (case, accents, `snake_case`), so "Invoice" and
 * "invoice" are one term. An operator's synonym counts as a full match of the query word
 * (these are the operator's own equivalences), weighted OPERATOR_WEIGHT, below the word itself.
 * Query words are looked up one at a time, so a rule whose left side has several words
 * ("machine learning => ml") applies to a query that quotes it ("\"machine learning\"").
 */
import fs from 'node:fs';
import { type RelatedTerm, type RelatedWords } from './related-words.js';
import { tokenize } from './text-encoder.js';

export const OPERATOR_WEIGHT = 0.9;
/** Bounds: a synonym file is trusted configuration, but a mistake should not eat the heap. */
const MAX_LINES = 100_000;
const MAX_TERMS_PER_RULE = 64;

export class SynonymFileError extends Error {}

export class Synonyms implements RelatedWords {
  private readonly map = new Map<string, RelatedTerm[]>();

  /** Number of terms that have synonyms. */
  get size(): number {
    return this.map.size;
  }

  /** `word`: a normalised word, or a phrase's normalised words joined by single spaces. */
  related(word: string): readonly RelatedTerm[] {
    return this.map.get(word) ?? [];
  }

  /** Parses the file's text; throws SynonymFileError naming `source` and the line. */
  static parse(text: string, source = 'synonyms'): Synonyms {
    const out = new Synonyms();
    const lines = text.split(/\r?\n/);
    if (lines.length > MAX_LINES) throw new SynonymFileError(`${source}: more than ${MAX_LINES} lines`);
    lines.forEach((line, i) => {
      const where = `${source}:${i + 1}`;
      const body = line.replace(/(^|\s)#.*$/, '').trim();
      if (!body) return;
      const arrow = body.indexOf('=>');
      if (arrow >= 0 && body.indexOf('=>', arrow + 2) >= 0) throw new SynonymFileError(`${where}: more than one "=>" in "${line.trim()}"`);
      const side = (s: string): string[][] =>
        s
          .split(',')
          .map((t) => tokenize(t))
          .filter((words) => words.length > 0);
      if (arrow >= 0) {
        const from = side(body.slice(0, arrow));
        const to = side(body.slice(arrow + 2));
        if (from.length === 0 || to.length === 0) {
          throw new SynonymFileError(`${where}: "${line.trim()}" needs terms on both sides of "=>" (e.g. "tax => vat, sales tax")`);
        }
        check(where, from, to);
        for (const f of from) out.add(f, to);
      } else {
        const group = side(body);
        if (group.length < 2) throw new SynonymFileError(`${where}: "${line.trim()}" needs at least two comma-separated terms (e.g. "billing, invoicing")`);
        check(where, group, []);
        for (const f of group) out.add(f, group);
      }
    });
    return out;
  }

  static load(file: string): Synonyms {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new SynonymFileError(`cannot read the synonym file ${file}: ${(err as Error).message}`);
    }
    return Synonyms.parse(text, file);
  }

  private add(from: string[], to: string[][]): void {
    const word = from.join(' ');
    const list = this.map.get(word) ?? [];
    for (const words of to) {
      if (words.join(' ') === word) continue;
      if (list.some((t) => t.words.join(' ') === words.join(' '))) continue;
      list.push({ words, weight: OPERATOR_WEIGHT, strong: true });
    }
    if (list.length) this.map.set(word, list);
  }
}

function check(where: string, a: string[][], b: string[][]): void {
  if (a.length + b.length > MAX_TERMS_PER_RULE) throw new SynonymFileError(`${where}: more than ${MAX_TERMS_PER_RULE} terms in one rule`);
}
