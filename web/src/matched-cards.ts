/**
 * The skills and tools a search matched in an entry, carried in the link from its hit to the
 * entry's page: /entries/{id}?matched=tool-gauge_137&matched=tool-gauge_138 (card anchors, as a
 * link's fragment names a card). The entry page shows them among the first of a long list, not
 * folded away behind "Show all" (entry/folded-cards). In the link, not kept by the tab: an entry
 * opened in a new tab, reloaded, or from a link someone shared shows what the search matched as a
 * plain click does, and the link says what matched (its words are not in it). A name that no card
 * has (the entry changed since, a link edited by hand) points at nothing, and nothing is said:
 * the entry is shown as it is. They are the current revision's (the one a search finds): a link to
 * another revision leaves them out.
 */
import type { SearchMatch } from './api';
import { cardAnchor } from './card-anchor';
import { href } from './config';

export const MATCHED_PARAM = 'matched';

/** The link to a hit's entry, with the skills and tools it matched (its best match and its others; the entry's own text names no card). */
export function entryLink(hit: { id: string; match: SearchMatch; matches?: SearchMatch[] }): string {
  const anchors = [hit.match, ...(hit.matches ?? [])].flatMap((m) => ((m.type === 'skill' || m.type === 'tool') && m.id !== undefined ? [cardAnchor(m.type, m.id)] : []));
  const query = new URLSearchParams(anchors.map((anchor) => [MATCHED_PARAM, anchor])).toString();
  return href(`/entries/${encodeURIComponent(hit.id)}${query ? `?${query}` : ''}`);
}

/** The anchors of the cards the entry page's link says a search matched. */
export const matchedCards = (params: URLSearchParams): ReadonlySet<string> => new Set(params.getAll(MATCHED_PARAM));
