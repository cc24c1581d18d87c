/**
 * Query text → the words to look up, with bounds on hostile input: only the first
 * MAX_QUERY_CHARS characters are read and the first MAX_QUERY_WORDS distinct words kept.
 */
import { tokenize } from './text-encoder.js';

export const MAX_QUERY_CHARS = 512;
export const MAX_QUERY_WORDS = 32;
/** The last word is also matched as a prefix when it has at least this many characters... */
export const MIN_PREFIX_LENGTH = 3;
/** ...and is expanded to at most this many longer terms. */
export const MAX_PREFIX_EXPANSIONS = 16;

export interface ParsedQuery {
  /** False when the text is empty or blank: the search lists what matches the filter. */
  readonly hasText: boolean;
  /** Distinct normalised words, in query order (may be empty for text like "!!!" or "the"). */
  readonly words: readonly string[];
  /** Whether the last word should also match longer terms ("transl" → "translate"). */
  readonly prefixLast: boolean;
}

const LAST_IS_WORD_CHAR = /[\p{L}\p{N}]$/u;

export function parseQuery(text: string | undefined): ParsedQuery {
  const raw = typeof text === 'string' ? text.slice(0, MAX_QUERY_CHARS) : '';
  if (!raw.trim()) return { hasText: false, words: [], prefixLast: false };
  // Tokenize a little more than the cap, so duplicates do not eat into it.
  const tokens = tokenize(raw, { maxTerms: MAX_QUERY_WORDS * 4 });
  const words = [...new Set(tokens)].slice(0, MAX_QUERY_WORDS);
  const last = words[words.length - 1];
  // A query that ends in a space or punctuation has its last word finished: no prefix.
  const prefixLast =
    last !== undefined &&
    last === tokens[tokens.length - 1] &&
    last.length >= MIN_PREFIX_LENGTH &&
    LAST_IS_WORD_CHAR.test(raw);
  return { hasText: true, words, prefixLast };
}
