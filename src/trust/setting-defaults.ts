/**
 * The trust roots' defaults for what a setting configures: trust roots made without the value
 * use them, and config/config.ts gives them (in seconds) to the setting left unset. Here,
 * importing nothing, so configuration reads them without loading the trust roots.
 */

/** How often an allow-listed JWKS is fetched again when its answer gives no lifetime (REGISTRY_TRUSTED_JKU_REFRESH_SECONDS). */
export const DEFAULT_JKU_REFRESH_MS = 60 * 60_000;

/** How long the keys of an allow-listed JWKS that cannot be fetched stay trusted after its last good fetch (REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS). */
export const DEFAULT_JKU_MAX_STALE_MS = 24 * 60 * 60_000;
