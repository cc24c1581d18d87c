/**
 * The search last shown in this tab (its URL: words, filters, page), so the entry page's way
 * back ("Search" above the entry) returns to the results the person came from, not to an empty
 * search. Kept for the page's life: an entry opened by a link first shows the search page.
 * (What each result matched travels in its link instead: see matched-cards.)
 */
let last: string | undefined;

export const rememberSearch = (url: string): void => {
  last = url;
};

/** The search to return to from an entry: the last one shown, or the search page. */
export const searchToReturnTo = (fallback: string): string => last ?? fallback;
