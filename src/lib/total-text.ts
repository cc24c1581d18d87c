/**
 * A search's result count as people read it: "at least N" when the registry stopped counting
 * (SearchPage.totalExact false: past REGISTRY_SEARCH_TOTAL_LIMIT, or past the search's work
 * bounds). Shared by every door that writes the count in words.
 */
export const totalText = (total: number, exact = true): string => (exact ? `${total}` : `at least ${total}`);

/** "No matches.", and why when the registry knows it (SearchPage.reason), alike in the A2A answer's text and the CLI. */
export const noMatchesText = (reason: string | undefined): string => (reason ? `No matches: ${reason}.` : 'No matches.');
