/** Outbound requests: the Fetcher interface (fetcher.ts) and its guarded implementation. */
export * from './fetcher.js';
export { AllowList, ADDRESS_RULES, type AddressRule } from './address-policy.js';
export {
  GuardedFetcher,
  DEFAULT_MAX_REDIRECTS,
  isJsonMediaType,
  type FetchEvent,
  type FetchObserver,
  type NameRefusal,
  type GuardedFetcherOptions,
  type OperatorEndpoint,
  type Resolver,
} from './guarded-fetcher.js';
export { DEFAULT_FETCH_TIMEOUT_MS } from './setting-defaults.js';
