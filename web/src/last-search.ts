/**
 * The search last shown in this tab (its URL: words, filters, page), so the entry page's way
 * back ("Search" above the entry) returns to the results the person came from, not to an empty
 * search. Kept for the page's life: an entry opened by a link first shows the search page.
 * With it, the skills and tools each of its results matched, so that entry's page shows them
 * among the first of a long list, not folded away behind "Show all".
 */
import type { SearchMatch } from './api';
import { cardAnchor } from './card-anchor';

let last: string | undefined;
/** Entry id to the anchors of the cards the last search matched in it (cardAnchor). */
let matched = new Map<string, ReadonlySet<string>>();

export const rememberSearch = (url: string): void => {
  last = url;
};

/** The search to return to from an entry: the last one shown, or the search page. */
export const searchToReturnTo = (fallback: string): string => last ?? fallback;

/** The results last shown: what each matched (its best match and its others; the entry's own text names no card). */
export const rememberMatches = (hits: readonly { id: string; match: SearchMatch; matches?: SearchMatch[] }[]): void => {
  matched = new Map(
    hits.map((hit) => [
      hit.id,
      new Set(
        [hit.match, ...(hit.matches ?? [])].flatMap((m) => ((m.type === 'skill' || m.type === 'tool') && m.id !== undefined ? [cardAnchor(m.type, m.id)] : [])),
      ),
    ]),
  );
};

/** The anchors of the entry's cards the last search matched (none when it was not among its results). */
export const matchedByLastSearch = (entryId: string): ReadonlySet<string> => matched.get(entryId) ?? new Set();
