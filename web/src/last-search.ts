/**
 * The search the entry page's way back ("Search" above the entry) returns to: the results the
 * person came from, not an empty search. The last search shown in this tab (its URL: words,
 * filters, page), kept for the page's life; in a tab opened from a result (a middle or Ctrl
 * click), the search page that opened it, which the result's link sends as the referrer to this
 * registry only (see referredBySearch). A shared link has neither: it goes to the search page.
 * (What each result matched travels in its link instead: see matched-cards.)
 */
import { parseLocation } from './router';

let last: string | undefined;

export const rememberSearch = (url: string): void => {
  last = url;
};

/**
 * The search page this document was opened from (a result opened in a new tab, or that tab
 * reloaded), if any. The page sends no referrer (Referrer-Policy: no-referrer) except from a
 * result's link, and from it to this registry only (referrerpolicy="same-origin"): the search's
 * words never reach another origin. Only a search page of this registry is taken as the way back.
 */
function referredBySearch(): string | undefined {
  if (!document.referrer) return undefined;
  const from = new URL(document.referrer);
  if (from.origin !== window.location.origin || parseLocation({ pathname: from.pathname, search: from.search } as Location).page !== 'search') return undefined;
  return from.pathname + from.search;
}

/** The search to return to from an entry: the last one shown in this tab, the one that opened it, or the search page. */
export const searchToReturnTo = (fallback: string): string => last ?? referredBySearch() ?? fallback;
