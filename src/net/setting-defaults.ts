/**
 * The outbound guard's default for what a setting configures: a fetcher made without the value
 * uses it, and config/config.ts gives it to the setting left unset. Here, importing nothing, so
 * configuration reads it without loading the fetcher (undici).
 */

/** How long one outbound request may take, redirects included (REGISTRY_FETCH_TIMEOUT_MS). */
export const DEFAULT_FETCH_TIMEOUT_MS = 5000;
