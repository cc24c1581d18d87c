/**
 * Configuration from environment variables, parsed and checked once at start-up with zod.
 * Anything invalid stops start-up with one line that names the variable and what it takes,
 * so an operator never runs a registry on a half-understood setting.
 */
import path from 'node:path';
import { domainToASCII } from 'node:url';
import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { AllowList, parseAddress, restrictedRange } from '../net/address-policy.js';
import { parseDnsServers } from '../net/dns.js';
import { DEFAULT_FETCH_TIMEOUT_MS } from '../net/setting-defaults.js';
import { DEFAULT_TOTAL_LIMIT } from '../search/setting-defaults.js';
import { DEFAULT_POSTGRES_STATEMENT_TIMEOUT_MS, DEFAULT_SQLITE_LOCK_WAIT_MS } from '../storage/setting-defaults.js';
import { DEFAULT_JKU_MAX_STALE_MS, DEFAULT_JKU_REFRESH_MS } from '../trust/setting-defaults.js';
import { clipped } from '../lib/clipped.js';
import { issueMessage } from '../lib/issue-words.js';
import { POSTGRES_URL_FORM, shownSettingValue, shownUrl, withoutPassword } from '../lib/url-password.js';
import { ADMIN_PRINCIPAL } from '../contract/caller.js';
import { ConfigError } from './config-error.js';
import { DEFAULT_DATA_DIR, dataDirUnsetMeans, emptySettingWarning } from './empty-setting.js';
import { readSettingFile, settingFileError } from './setting-files.js';

export { ADMIN_PRINCIPAL };

export interface RegistryConfig {
  port: number;
  host: string;
  /** Absolute base URL peers use to reach this registry (no trailing slash). */
  publicUrl: string;
  dataDir: string;
  /** postgres://... selects PostgreSQL; absent means the embedded SQLite in dataDir. */
  databaseUrl?: string;
  /** SQLite: how long a write waits for another process's write lock (an import's transaction) before failing (ms). */
  sqliteLockWaitMs: number;
  /** SQLite: hours between background integrity checks of the database file (the first a minute after the index has loaded); 0: none. */
  sqliteCheckHours: number;
  /** How long after the index has loaded the first check runs (ms; a minute unless a test shortens it). */
  sqliteFirstCheckAfterMs?: number;
  /** PostgreSQL: the server-side limit of one statement, lock waits included (ms). */
  postgresStatementTimeoutMs: number;
  /**
   * token -> principal: REGISTRY_TOKENS, plus REGISTRY_ADMIN_TOKEN(_FILE) as `admin`. Empty: a
   * generated admin token is written to dataDir/admin-token.
   */
  tokens: Map<string, string>;
  publicRead: boolean;
  maxDocumentBytes: number;
  /** Largest accepted HTTP request body, in bytes. */
  maxBodyBytes: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Seconds the well-known card may be cached. */
  cardMaxAgeSeconds: number;
  /** Seconds catalogs, ARD answers and registered documents may be cached (they change with every registration). */
  catalogMaxAgeSeconds: number;
  /** Host names the MCP endpoint answers besides PUBLIC_URL's (DNS-rebinding protection). */
  mcpAllowedHosts: string[];
  /** Durable tasks (accepted writes): finished ones older than maxAgeMs, or beyond the newest maxCount, are pruned. */
  taskRetention: { maxAgeMs: number; maxCount: number };
  /** Tasks held in memory (reads, refusals): at most maxTasks, about maxBytes, each for ttlMs. */
  taskMemory: { maxTasks: number; maxBytes: number; ttlMs: number };
  /** The change log keeps this long; a replica further behind reloads from the entries. */
  changeRetentionMs: number;
  /** Per-principal limits; admins are exempt. */
  quota: { maxEntriesPerOwner: number; maxRevisions: number };
  /** HTTP server limits (node:http). */
  connections: ConnectionLimits;
  /** Warn about http: URLs in registered documents (on when PUBLIC_URL is https). */
  warnInsecureHttp: boolean;
  /** Signs page tokens; replicas behind one load balancer need the same one. */
  pageTokenSecret?: string;
  /** Hostile-input and abuse limits (see README, "Limits and abuse control"). */
  hardening: HardeningConfig;
  /** Outbound requests (cards by URL, refresh, probes, MCP, JWKS, webhooks): see src/net. */
  fetch: FetchConfig;
  /**
   * Standing searches: open watches per principal, time to live, events kept for resuming,
   * matching entries a watch may follow. The leases' timing (leaseMs, renewEveryMs,
   * claimEveryMs) is no setting: the defaults (subscriptions/watch-hub.ts) unless a test
   * shortens them.
   */
  watches: {
    maxPerPrincipal: number;
    ttlMs: number;
    bufferEvents: number;
    maxTracked: number;
    webhookRetryMs: number;
    /** A push config's token or credentials may go to a plain http webhook anywhere (REGISTRY_WEBHOOK_HTTP_CREDENTIALS), not only to one REGISTRY_FETCH_ALLOW allows. */
    httpCredentials: boolean;
    leaseMs?: number;
    renewEveryMs?: number;
    claimEveryMs?: number;
  };
  /** Keeping entries fresh: refresh from sources, probes, health in search. */
  freshness: FreshnessConfig;
  /** Signed cards (see README, "Signed cards"). */
  trust: TrustConfig;
  /** The A2A gRPC binding on a port of its own; undefined when GRPC_PORT is unset (off). */
  grpc?: GrpcConfig;
  /** Search relevance extras: the operator's synonyms and hybrid ranking (see src/search). */
  search: SearchConfig;
  /** Things to tell the operator at start-up (a REGISTRY_ variable the registry does not read: a typo?). */
  warnings?: string[];
  /**
   * The settings given (the others are at their defaults), as the registry took them, for the
   * start-up log: secrets as `***`, a URL's password and query values masked (shownSettings).
   */
  given?: Record<string, ShownSetting>;
}

/** A setting's value as the start-up log shows it. */
export type ShownSetting = string | number | boolean | string[];

export interface SearchConfig {
  /** Absolute path of a synonym file (Solr synonyms.txt format), REGISTRY_SYNONYMS. */
  synonymsFile?: string;
  /** Hybrid ranking with an OpenAI-compatible /v1/embeddings service; off when absent. */
  embeddings?: { url: string; model: string; apiKey?: string; dimensions?: number };
  /**
   * The index saved beside the data, loaded at start-up instead of re-indexing every entry
   * (REGISTRY_INDEX_SNAPSHOT_DIR, default the data directory), every `snapshotSeconds` when
   * something changed and at shutdown (REGISTRY_INDEX_SNAPSHOT_SECONDS, 0: never). Not used
   * with hybrid ranking.
   */
  snapshotDir: string;
  snapshotSeconds: number;
  /** Recent search answers kept while the index is unchanged (REGISTRY_SEARCH_CACHE_ENTRIES, 0: off). */
  cacheEntries: number;
  /** What those answers may hold in memory at most, their JSON included (REGISTRY_SEARCH_CACHE_BYTES). */
  cacheBytes: number;
  /** A search's `total` is exact up to this many results, "at least" past it (REGISTRY_SEARCH_TOTAL_LIMIT). */
  totalLimit: number;
}

export interface FreshnessConfig {
  /** Entries with a source (and probed agents) are checked this often; 0: only on request. */
  refreshSeconds: number;
  /** Also check agents registered inline, at the well-known card of their primary interface. */
  probe: boolean;
  /** Leave entries unhealthy for longer than this out of default search results; undefined: never. */
  hideUnhealthySeconds?: number;
}

export interface FetchConfig {
  /** Hosts, addresses and CIDR ranges exempt from the private/loopback/... address rules. */
  allow: AllowList;
  /** Deadline of one outbound request (resolution, connect, redirects, headers and body). */
  timeoutMs: number;
  /** DNS servers outbound host names are resolved with (REGISTRY_DNS_SERVERS); unset: the system resolver. */
  dnsServers?: string[];
}

export interface ConnectionLimits {
  /** The whole request (headers and body) must arrive within this; slower clients get 408 and are cut off. */
  requestTimeoutMs: number;
  /** The request headers must arrive within this. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Connections beyond this are closed at once. */
  maxConnections: number;
  /** A streaming answer (SSE) quiet this long gets a `: keep-alive` comment, so proxies keep it open. */
  sseHeartbeatMs: number;
  /**
   * At shutdown, how long requests and streams in flight may take to finish before they are cut
   * off (REGISTRY_SHUTDOWN_GRACE_SECONDS). The index save and storage close come after it, and
   * all of it must fit the stop timeout of whatever stops the registry (Docker's is 10 s).
   */
  shutdownGraceMs: number;
  /**
   * A gRPC connection this old gets a GOAWAY (REGISTRY_GRPC_MAX_CONNECTION_AGE_SECONDS; 0: never),
   * so that clients of long-lived channels reconnect, and spread over the replicas behind a TCP
   * load balancer; its watch streams end to be resumed (grpc/connection-age.ts).
   */
  grpcMaxConnectionAgeMs: number;
}

export interface TrustConfig {
  /** A JWKS file of trusted public keys (REGISTRY_TRUSTED_KEYS), reloaded on change and SIGHUP. */
  keysFile?: string;
  /** Allow-listed JWKS URLs (REGISTRY_TRUSTED_JKU), fetched through the outbound guard. */
  jkuUrls: string[];
  /**
   * The longest an allow-listed JWKS is used before it is fetched again, and how long when its
   * answer gives no lifetime (REGISTRY_TRUSTED_JKU_REFRESH_SECONDS); a shorter Cache-Control
   * max-age or Expires is honoured down to a minute.
   */
  jkuRefreshSeconds: number;
  /** How long the keys of an allow-listed JWKS that cannot be fetched stay trusted after its last good fetch (REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS). */
  jkuMaxStaleSeconds: number;
  /** `site`: an allow-listed JWKS vouches only for cards on its own host (REGISTRY_TRUSTED_JKU_SCOPE). */
  jkuScope: 'any' | 'site';
  /** Agent cards must carry a signature by a trusted key (REGISTRY_REQUIRE_VERIFIED). */
  requireVerified: boolean;
  /** A private JWK the registry signs its own card with (REGISTRY_SIGNING_KEY). */
  signingKeyFile?: string;
  /** A JWKS of the public keys it signed with before, still published (REGISTRY_RETIRED_SIGNING_KEYS). */
  retiredSigningKeysFile?: string;
}

export interface GrpcConfig {
  /** Port to listen on, on HOST (0: any free port, for tests). */
  port: number;
  /**
   * The gRPC target clients dial (`host:port`), as the card advertises it. Undefined: PUBLIC_URL's
   * host with the port listened on.
   */
  publicUrl?: string;
}

export interface HardeningConfig {
  /** Deepest JSON nesting accepted in a request body or an uploaded document. */
  maxJsonDepth: number;
  /** Longest search query in characters. */
  maxQueryChars: number;
  /** Rate limits and the stream cap are applied at all (off: for benchmarks behind another limiter). */
  rateLimits: boolean;
  /** register/unregister/refresh/watch per minute, per principal and per client address. */
  writesPerMinute: number;
  /** search/get/list/validate per minute, per principal and per client address. */
  readsPerMinute: number;
  /** Any A2A request per minute per client address, refused with HTTP 429 before it is parsed. */
  requestsPerMinute: number;
  /** Concurrent SSE streams per client address. */
  maxStreamsPerClient: number;
  /** IPv6 clients are counted by their network of this prefix length (128: address by address). */
  ipv6Prefix: number;
  /** Browser origins allowed by CORS: none (off), '*' or a list. */
  corsOrigins: string[] | '*';
  /** Express "trust proxy": false, true, the number of proxy hops in front, or the proxies' addresses. */
  trustProxy: TrustProxy;
  /** When set, GET /metrics needs "Authorization: Bearer <this>". */
  metricsToken?: string;
}

export { ConfigError };

/** Whose X-Forwarded-For is believed: nobody, everybody, the n nearest hops, or these proxies (addresses, CIDR subnets, loopback/linklocal/uniquelocal). */
export type TrustProxy = boolean | number | readonly string[];

const TRUST_PROXY_FORMS =
  'must be true, false, a number of proxy hops, or the proxies\' addresses (comma-separated IP addresses or CIDR subnets, or loopback, linklocal, uniquelocal; e.g. "10.0.0.0/8,loopback")';

/** The most proxy hops REGISTRY_TRUST_PROXY may count: more than any real chain of proxies. */
const MAX_PROXY_HOPS = 99;

/**
 * A proxy as people write one: a keyword proxy-addr knows, or an address (or subnet) in the
 * standard notation. proxy-addr takes every form ipaddr.js parses, "0x10" and "10.1" among them,
 * which no one means as an address.
 */
function isProxyNotation(proxy: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(proxy)) return true;
  const slash = proxy.lastIndexOf('/');
  const address = slash === -1 ? proxy : proxy.slice(0, slash);
  const range = slash === -1 ? undefined : proxy.slice(slash + 1);
  if (address.startsWith('[') || parseAddress(address) === undefined) return false;
  // A prefix length, or an IPv4 netmask (255.0.0.0); proxy-addr checks its size.
  return range === undefined || /^\d+$/.test(range) || parseAddress(range) !== undefined;
}

/**
 * A number written the plain way (digits, a sign, a decimal point), as `schema` checks it.
 * z.coerce takes anything Number() takes: PORT=0x50 was port 80, 1e3 was 1000, and an empty
 * value 0. Anything else stays as given, and `schema` refuses it with its own message.
 */
const decimal = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && /^\s*[-+]?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v), schema);

/**
 * A word among `schema`'s, whitespace around it dropped as a number's is: REGISTRY_PUBLIC_READ="false "
 * (an env file's trailing space) was refused as no true or false, the message showing "false " (the
 * space easily missed), while REGISTRY_MAX_WATCHES=" 5 " was 5.
 */
const word = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (typeof v === 'string' ? v.trim() : v), schema);

const booleanString = word(z.enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false (or 1/0, yes/no)' })).transform(
  (v) => v === 'true' || v === '1' || v === 'yes',
);

/** A number from `min` to `max`, fractions allowed; anything else is refused with `message`, which says what it takes. */
const numberFrom = (min: number, max: number, message: string) => decimal(z.number({ message }).min(min, { message }).max(max, { message }));

/** A whole number from `min` to `max`; anything else is refused with `message`, which says what it takes. */
const wholeNumber = (min: number, max: number, message: string) => decimal(z.number({ message }).int({ message }).min(min, { message }).max(max, { message }));

/** A whole number of seconds up to `maxDays` days, 0 turning `what` off. */
const secondsOrOff = (what: string, maxDays: number) =>
  wholeNumber(0, maxDays * 86400, `must be a whole number of seconds from 0 (turns ${what} off) to ${maxDays * 86400} (${maxDays} days)`);

/**
 * A whole number from `min` to `max`. One message for every way to miss it: "must be at least 1"
 * told a value of "ten" nothing, and "must be a whole number" of 0 not what range it takes.
 */
const positiveInt = (max: number, min = 1) => wholeNumber(min, max, `must be a whole number from ${min} to ${max}`);

/** A port to listen on: 0 (any free port) is for tests. */
const portNumber = () => wholeNumber(0, 65535, 'must be a port number, a whole number from 0 to 65535');

/** A cache lifetime: a whole number of seconds from 0 (revalidate every time) to one day. */
const maxAgeSeconds = () => wholeNumber(0, 86400, 'must be a whole number of seconds from 0 to 86400 (one day)');

/** A retention period in hours, fractions allowed, up to a year. */
const retentionHours = () => {
  const message = 'must be a number of hours above 0 (fractions allowed), at most 8760 (a year)';
  return decimal(z.number({ message }).positive({ message }).max(24 * 365, { message }));
};

/** Tokens shorter than this are refused, wherever they come from (a generated admin token is longer). */
export const MIN_TOKEN_CHARS = 16;

/**
 * A token is one word: "Authorization: Bearer <token>" carries no whitespace in it (RFC 6750's
 * b64token; src/auth/tokens.ts reads `Bearer\s+(\S+)`), so a token with a space inside was
 * accepted at start-up and could never be presented: /metrics, or that principal, shut out.
 */
const ONE_WORD = /^\S+$/;
const NOT_ONE_WORD = 'contains whitespace, which no "Authorization: Bearer <token>" header can carry: a token is one word; remove the spaces';

/**
 * Why `token` could never be presented (whitespace inside it), or undefined. The one rule for
 * every token, wherever it comes from: REGISTRY_TOKENS, REGISTRY_ADMIN_TOKEN(_FILE),
 * REGISTRY_METRICS_TOKEN and the admin-token file in the data directory (src/auth/tokens.ts).
 */
export function unpresentableToken(token: string): string | undefined {
  return ONE_WORD.test(token) ? undefined : NOT_ONE_WORD;
}

/**
 * A value that begins or ends with whitespace (`REGISTRY_DATA_DIR: " /data"` in a compose file) is
 * a quoting mistake: refused, saying so and what it `would` have done.
 */
const noWhitespaceAround = (v: string): boolean => v.trim() === v;
const whitespaceAround = (would: string) => ({ message: `begins or ends with whitespace, which ${would} (a quoting mistake?): remove it` });

/**
 * A file or directory path. One beginning or ending with whitespace named another place,
 * relative to the working directory: the database was written there, beside the volume meant
 * for it, and lost with the container.
 */
const pathSetting = () =>
  z
    .string()
    .min(1)
    .refine(noWhitespaceAround, whitespaceAround('would name another file or directory'));

const tokensSchema = z
  .string()
  .transform((raw, ctx) => {
    const tokens = new Map<string, string>();
    for (const [index, pair] of raw.split(',').map((s) => s.trim()).filter(Boolean).entries()) {
      const sep = pair.indexOf(':');
      const principal = pair.slice(0, sep).trim();
      const token = pair.slice(sep + 1).trim();
      if (sep <= 0 || !token) {
        // Without a colon the whole item may be a token: name it by its place, never by its text.
        const shown = sep > 0 ? `"${pair.slice(0, sep)}:…"` : `item ${index + 1}`;
        ctx.addIssue({ code: 'custom', message: `${shown} is not principal:token (a principal name, a colon, then its token)` });
        return z.NEVER;
      }
      if (token.length < MIN_TOKEN_CHARS) {
        ctx.addIssue({ code: 'custom', message: `gives "${principal}" a token shorter than ${MIN_TOKEN_CHARS} characters` });
        return z.NEVER;
      }
      const unpresentable = unpresentableToken(token);
      if (unpresentable) {
        ctx.addIssue({ code: 'custom', message: `gives "${principal}" a token that ${unpresentable}` });
        return z.NEVER;
      }
      if (tokens.has(token)) {
        // The same pair twice (a copy-paste slip) was "gives two principals one token".
        const message = tokens.get(token) === principal ? `lists "${principal}" with one token twice: remove one of them` : 'gives two principals one token: give each its own';
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      tokens.set(token, principal);
    }
    return tokens;
  });

const databaseUrlSchema = z
  .string()
  // Checked first: " postgres://..." was "must be a postgres:// or postgresql:// URL", shown as
  // one (the password masked, the space lost with it).
  .refine(noWhitespaceAround, whitespaceAround('no URL holds'))
  .regex(/^(postgres|postgresql):\/\//, { message: 'must be a postgres:// or postgresql:// URL (leave it unset for SQLite)' })
  // Otherwise the first connection failed with a bare "Invalid URL", after start-up had begun.
  .refine((url) => URL.canParse(url), {
    message: `is not a valid URL: ${POSTGRES_URL_FORM}`,
  });

const envSchema = z.object({
  PORT: portNumber().default(8080),
  HOST: z.string().min(1).refine(noWhitespaceAround, whitespaceAround('is no address to listen on')).default('127.0.0.1'),
  PUBLIC_URL: z.url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' }).optional(),
  GRPC_PORT: portNumber().optional(),
  // What gRPC clients hand to their channel (the SDKs pass the card's URL as the channel target).
  PUBLIC_GRPC_URL: z
    .string()
    .max(1024, { message: 'must be at most 1024 characters: the gRPC address clients dial, host:port (e.g. registry.example.com:443)' })
    .regex(/^(dns:(\/\/[^/\s]*)?\/)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):\d{1,5}$/, {
      message: 'must be the gRPC address clients dial: host:port, [ipv6]:port or dns:///host:port (e.g. registry.example.com:443)',
    })
    .optional(),
  REGISTRY_DATA_DIR: pathSetting().default(DEFAULT_DATA_DIR),
  DATABASE_URL: databaseUrlSchema.optional(),
  // The URL, its password with it, in a file (a Docker or Kubernetes secret): out of the
  // environment, `docker inspect` and the process list.
  DATABASE_URL_FILE: pathSetting().optional(),
  // An import's transactions hold the lock for about a second at most (src/storage/sqlite/store.ts).
  REGISTRY_SQLITE_LOCK_WAIT_MS: wholeNumber(0, 600_000, 'must be a whole number of milliseconds from 0 (fail at once) to 600000').default(DEFAULT_SQLITE_LOCK_WAIT_MS),
  // A quick_check reads the whole file, about 2 s per 100,000 entries (docs/scaling.md): daily by default.
  REGISTRY_SQLITE_CHECK_HOURS: wholeNumber(0, 8760, 'must be a whole number of hours from 0 (no background check) to 8760 (a year)').default(24),
  // Not 0 (PostgreSQL's "no limit"): it bounds how long a write waits for a lock, and how long a request waits for a busy pool.
  REGISTRY_POSTGRES_STATEMENT_TIMEOUT_MS: wholeNumber(1000, 600_000, 'must be a whole number of milliseconds from 1000 to 600000 (10 minutes)').default(DEFAULT_POSTGRES_STATEMENT_TIMEOUT_MS),
  REGISTRY_TOKENS: tokensSchema.default(new Map()),
  REGISTRY_ADMIN_TOKEN: z.string().trim().min(MIN_TOKEN_CHARS, { message: `must be at least ${MIN_TOKEN_CHARS} characters` }).refine((token) => !unpresentableToken(token), { message: NOT_ONE_WORD }).optional(),
  REGISTRY_ADMIN_TOKEN_FILE: pathSetting().optional(),
  REGISTRY_PUBLIC_READ: booleanString.default(true),
  REGISTRY_MAX_DOCUMENT_BYTES: positiveInt(1024 * 1024).default(10240),
  REGISTRY_MAX_BODY_BYTES: positiveInt(16 * 1024 * 1024).optional(),
  REGISTRY_CARD_MAX_AGE: maxAgeSeconds().default(300),
  REGISTRY_CATALOG_MAX_AGE: maxAgeSeconds().default(60),
  REGISTRY_MCP_ALLOWED_HOSTS: z
    .string()
    .transform((raw, ctx) => {
      const hosts: string[] = [];
      for (const written of raw.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean)) {
        // A Host header carries a name in its ASCII form, and without the root's dot as browsers
        // send it: "bücher.example" was refused here, though REGISTRY_FETCH_ALLOW takes it, and
        // "registry.example.com." was taken, then matched no request (hostOfHostHeader drops the dot).
        const host = /^\[[0-9a-f:.]+\]$/.test(written) ? written : domainToASCII(written.replace(/\.$/, ''));
        if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/.test(host)) {
          ctx.addIssue({ code: 'custom', message: `"${written}" is not a host name (no scheme, port or path; IPv6 in brackets)` });
          return z.NEVER;
        }
        hosts.push(host);
      }
      return hosts;
    })
    .optional(),
  REGISTRY_TASK_RETENTION_HOURS: retentionHours().default(24 * 7),
  REGISTRY_TASK_RETENTION_COUNT: positiveInt(10_000_000).default(100_000),
  REGISTRY_TASK_MEMORY_COUNT: positiveInt(10_000_000).default(10_000),
  REGISTRY_TASK_MEMORY_BYTES: positiveInt(16 * 1024 ** 3, 65536).default(64 * 1024 * 1024),
  REGISTRY_TASK_MEMORY_TTL_SECONDS: positiveInt(7 * 86400).default(900),
  REGISTRY_CHANGES_RETENTION_HOURS: retentionHours().default(24),
  REGISTRY_MAX_ENTRIES_PER_OWNER: positiveInt(100_000_000).default(1000),
  REGISTRY_MAX_REVISIONS: positiveInt(1_000_000).default(100),
  REGISTRY_MAX_WATCHES: positiveInt(100_000).default(10),
  REGISTRY_WATCH_TTL_SECONDS: positiveInt(365 * 86400).default(86400),
  REGISTRY_WATCH_BUFFER: positiveInt(1_000_000).default(1000),
  REGISTRY_WATCH_MAX_MATCHES: positiveInt(10_000_000).default(10_000),
  REGISTRY_WEBHOOK_RETRY_SECONDS: numberFrom(0, 3600, 'must be seconds from 0 to 3600 (e.g. 60; 0: one attempt)').default(60),
  REGISTRY_WEBHOOK_HTTP_CREDENTIALS: booleanString.default(false),
  REGISTRY_REQUEST_TIMEOUT_SECONDS: positiveInt(3600).default(30),
  REGISTRY_HEADERS_TIMEOUT_SECONDS: positiveInt(3600).optional(),
  REGISTRY_KEEP_ALIVE_TIMEOUT_SECONDS: positiveInt(3600).default(5),
  REGISTRY_SSE_HEARTBEAT_SECONDS: numberFrom(0.5, 300, 'must be seconds from 0.5 to 300 (e.g. 15; below the idle timeout of every proxy in front of the registry)').default(15),
  REGISTRY_MAX_CONNECTIONS: positiveInt(1_000_000).default(1024),
  // 5 s: with the index save after it (about 1 s per 100,000 entries, docs/scaling.md) a shutdown
  // fits Docker's default stop timeout of 10 s up to about 300,000 entries; 10 s did not at all
  // whenever a client held a request open, and the save was killed.
  REGISTRY_SHUTDOWN_GRACE_SECONDS: numberFrom(0, 3600, 'must be seconds from 0 to 3600 (e.g. 5; 0: requests in flight are cut off at once)').default(5),
  REGISTRY_GRPC_MAX_CONNECTION_AGE_SECONDS: numberFrom(0, 604800, 'must be seconds from 0 to 604800 (e.g. 1800; 0: a gRPC connection is never closed for its age)').default(1800),
  // Whitespace around it (a quoting mistake) made another key than the other replicas' copy
  // without it, and each refused the page tokens the others issued as not issued.
  REGISTRY_PAGE_TOKEN_SECRET: z
    .string()
    .refine(noWhitespaceAround, whitespaceAround("would sign page tokens with another key than a replica given it without (each refusing the others')"))
    .refine((v) => v.length >= 16, { message: 'must be at least 16 characters' })
    .optional(),
  LOG_LEVEL: word(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { message: 'must be one of fatal, error, warn, info, debug, trace or silent' })).default('info'),
  REGISTRY_MAX_JSON_DEPTH: positiveInt(1000, 16).default(100),
  REGISTRY_MAX_QUERY_CHARS: positiveInt(10_000).default(1000),
  REGISTRY_RATE_LIMITS: booleanString.default(true),
  REGISTRY_RATE_WRITES_PER_MINUTE: positiveInt(10_000_000).default(600),
  REGISTRY_RATE_READS_PER_MINUTE: positiveInt(10_000_000).default(6000),
  REGISTRY_RATE_REQUESTS_PER_MINUTE: positiveInt(10_000_000).default(12000),
  REGISTRY_MAX_STREAMS_PER_CLIENT: positiveInt(100_000).default(16),
  // 56: one IPv6 subscriber holds a /64 at least, often a /56 (src/http/client-network.ts).
  REGISTRY_RATE_IPV6_PREFIX: wholeNumber(32, 128, 'must be a whole number of bits from 32 to 128 (e.g. 56: the IPv6 clients of one /56 network share one budget; 128: every IPv6 address has its own)').default(56),
  REGISTRY_CORS_ORIGINS: z
    .string()
    .transform((raw, ctx) => {
      const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
      if (list.includes('*')) return '*' as const;
      const origins = new Set<string>();
      for (const origin of list) {
        // A pattern matched nothing: origins are compared whole (the cors package, the MCP guard).
        if (origin.includes('*')) {
          ctx.addIssue({ code: 'custom', message: `"${origin}" holds a wildcard, which an origin cannot: list each origin (e.g. https://app.example.com,https://admin.example.com), or give * alone for every origin` });
          return z.NEVER;
        }
        const url = /^https?:\/\/[^/\s?#@]+$/i.test(origin) && URL.canParse(origin) ? new URL(origin) : undefined;
        if (!url) {
          ctx.addIssue({ code: 'custom', message: `"${origin}" is not an origin (scheme://host[:port], no path) or *` });
          return z.NEVER;
        }
        // As browsers send it in Origin (lower case, no default port): https://App.example.com or
        // https://app.example.com:443 was compared as written, and no browser's request matched.
        origins.add(url.origin);
      }
      return [...origins];
    })
    .optional(),
  REGISTRY_TRUST_PROXY: z
    .string()
    .transform((raw, ctx): TrustProxy => {
      const v = raw.trim();
      if (v === 'true' || v === 'false') return v === 'true';
      // Digits are a hop count, whatever their number: 100, 010 or 0100 were taken for the IPv4
      // addresses 0.0.0.100 and 0.0.0.8 (ipaddr.js reads inet_aton's forms), trusting no proxy.
      if (/^\d+$/.test(v)) {
        const hops = Number(v);
        if (hops <= MAX_PROXY_HOPS) return hops;
        ctx.addIssue({
          code: 'custom',
          message: `is ${v} proxy hops, more than any chain of proxies (at most ${MAX_PROXY_HOPS}): a count beyond the proxies in front of the registry believes what clients write into X-Forwarded-For; give the number of proxies, or their addresses`,
        });
        return z.NEVER;
      }
      // A hop count trusts whatever peer connects, so a client reaching the registry directly
      // (not through the proxy) names any address in X-Forwarded-For. Naming the proxies by
      // address trusts the header only from them.
      const proxies = v.split(',').map((s) => s.trim()).filter(Boolean);
      const unreadable = proxies.find((proxy) => !isProxyNotation(proxy));
      if (unreadable !== undefined) {
        ctx.addIssue({ code: 'custom', message: `"${unreadable}" is no proxy address (IPv4 in four decimal numbers, IPv6 without brackets, either with a /prefix): ${TRUST_PROXY_FORMS}` });
        return z.NEVER;
      }
      try {
        proxyAddr.compile(proxies);
        if (proxies.length > 0) return proxies;
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `${(err as Error).message}: ${TRUST_PROXY_FORMS}` });
        return z.NEVER;
      }
      ctx.addIssue({ code: 'custom', message: TRUST_PROXY_FORMS });
      return z.NEVER;
    })
    .default(false),
  REGISTRY_METRICS_TOKEN: z.string().min(MIN_TOKEN_CHARS, { message: `must be at least ${MIN_TOKEN_CHARS} characters` }).refine((token) => !unpresentableToken(token), { message: NOT_ONE_WORD }).optional(),
  // Outbound requests (issue 16).
  REGISTRY_FETCH_ALLOW: z
    .string()
    .transform((raw, ctx) => {
      try {
        return AllowList.parse(raw);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: `must list host names, IP addresses or CIDR ranges: ${(error as Error).message}` });
        return z.NEVER;
      }
    })
    .optional(),
  REGISTRY_FETCH_TIMEOUT_MS: positiveInt(120_000, 100).default(DEFAULT_FETCH_TIMEOUT_MS),
  REGISTRY_DNS_SERVERS: z
    .string()
    .transform((raw, ctx) => {
      try {
        return parseDnsServers(raw);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: `must list DNS servers' IP addresses, each with an optional port: ${(error as Error).message}` });
        return z.NEVER;
      }
    })
    .optional(),
  // Search relevance (issue 18).
  REGISTRY_SYNONYMS: pathSetting().optional(),
  REGISTRY_EMBEDDINGS_URL: z.url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL of an OpenAI-compatible embeddings service' }).optional(),
  REGISTRY_EMBEDDINGS_MODEL: z.string().max(200, { message: 'must be at most 200 characters: the name of a model the embeddings service serves, e.g. text-embedding-3-small' }).default('text-embedding-3-small'),
  REGISTRY_EMBEDDINGS_KEY: z.string().min(1).optional(),
  REGISTRY_EMBEDDINGS_DIMENSIONS: positiveInt(16_384).optional(),
  // Search index snapshots (issue 22).
  REGISTRY_INDEX_SNAPSHOT_DIR: pathSetting().optional(),
  REGISTRY_INDEX_SNAPSHOT_SECONDS: secondsOrOff('index snapshots', 7).default(600),
  REGISTRY_SEARCH_CACHE_ENTRIES: wholeNumber(0, 1_000_000, 'must be a whole number of answers from 0 (off) to 1000000').default(1000),
  // 128 MiB: the default 1,000 answers of 20 common hits (about 50 KB each, JSON included) fit.
  REGISTRY_SEARCH_CACHE_BYTES: positiveInt(16 * 1024 ** 3, 1024 * 1024).default(128 * 1024 * 1024),
  REGISTRY_SEARCH_TOTAL_LIMIT: positiveInt(100_000_000).default(DEFAULT_TOTAL_LIMIT),
  REGISTRY_REFRESH_SECONDS: secondsOrOff('refreshing', 30).default(3600),
  REGISTRY_PROBE: booleanString.default(false),
  REGISTRY_HIDE_UNHEALTHY_SECONDS: positiveInt(365 * 86400).optional(),
  REGISTRY_TRUSTED_KEYS: pathSetting().optional(),
  REGISTRY_TRUSTED_JKU: z
    .string()
    .transform((raw, ctx) => {
      const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
      for (const [index, url] of list.entries()) {
        let parsed: URL | undefined;
        try {
          parsed = new URL(url);
        } catch {
          parsed = undefined;
        }
        // Shown as other settings' values are, its password masked (it was shown whole); one that
        // may hold a secret where it cannot be told, by its place in the list.
        const shown = shownSettingValue(url);
        const named = shown === undefined ? `item ${index + 1}` : `"${shown}"`;
        if (!parsed || !/^https?:$/.test(parsed.protocol)) {
          ctx.addIssue({ code: 'custom', message: `${named} is not an http(s) URL of a JWKS (comma-separated list)` });
          return z.NEVER;
        }
        if (parsed.username || parsed.password) {
          ctx.addIssue({ code: 'custom', message: `${named} carries a user name or password, which the registry never sends: remove "${parsed.username}${parsed.password ? ':…' : ''}@"` });
          return z.NEVER;
        }
      }
      return list;
    })
    .optional(),
  REGISTRY_TRUSTED_JKU_REFRESH_SECONDS: wholeNumber(1, 86400, 'must be a whole number of seconds from 1 to 86400 (one day)').default(DEFAULT_JKU_REFRESH_MS / 1000),
  REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS: wholeNumber(60, 30 * 86400, 'must be a whole number of seconds from 60 to 2592000 (30 days)').default(DEFAULT_JKU_MAX_STALE_MS / 1000),
  REGISTRY_TRUSTED_JKU_SCOPE: word(z.enum(['any', 'site'], { message: 'must be "any" (a key from an allow-listed JWKS verifies any card) or "site" (only cards whose endpoints are on the JWKS URL\'s host or under it)' })).default('any'),
  REGISTRY_REQUIRE_VERIFIED: booleanString.default(false),
  REGISTRY_SIGNING_KEY: pathSetting().optional(),
  REGISTRY_RETIRED_SIGNING_KEYS: pathSetting().optional(),
});

/** Variables whose values are never echoed in an error message. */
const SECRET_VARIABLES = new Set(['REGISTRY_TOKENS', 'REGISTRY_ADMIN_TOKEN', 'REGISTRY_PAGE_TOKEN_SECRET', 'REGISTRY_METRICS_TOKEN', 'REGISTRY_EMBEDDINGS_KEY']);

/** Addresses that mean "every interface": fine to listen on, meaningless to peers. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0', '[0:0:0:0:0:0:0:0]']);

/**
 * The URL the agent card advertises. Without PUBLIC_URL it is derived from HOST and PORT, which
 * is right on one machine (127.0.0.1) and wrong behind a wildcard listen address: a card saying
 * http://0.0.0.0:8080 sends every peer to itself. Refuse that (and a wildcard PUBLIC_URL) with
 * what to set instead, rather than publish an address nobody can use.
 */
function resolvePublicUrl(publicUrl: string | undefined, host: string, port: number): string {
  if (publicUrl !== undefined) {
    // First: the wildcard's refusal shows the URL as given, which is then known to carry no
    // password (it showed http://user:password@0.0.0.0 whole).
    notABaseUrl(publicUrl);
    const hostname = new URL(publicUrl).hostname;
    if (WILDCARD_HOSTS.has(hostname)) {
      throw new ConfigError(
        `invalid configuration: PUBLIC_URL must be an address peers can reach, not the wildcard ${hostname} (got "${publicUrl}"); set it to the URL clients use, e.g. https://registry.example.com`,
      );
    }
    // As a URL parser writes it: HTTPS://Registry.Example.com was published as written, and
    // taken for no https URL (warnInsecureHttp compares the scheme), so documents' http: URLs went
    // unwarned; a default port (:443) is dropped as browsers and clients drop it.
    return new URL(publicUrl).href.replace(/\/+$/, '');
  }
  if (WILDCARD_HOSTS.has(host)) {
    throw new ConfigError(
      `invalid configuration: HOST is ${host}, which listens on every interface, so the registry cannot tell which address peers should use: ` +
        `set PUBLIC_URL to the URL clients reach it at (e.g. PUBLIC_URL=https://registry.example.com, or PUBLIC_URL=http://localhost:${port} to try it on this machine); ` +
        'the agent card advertises that URL',
    );
  }
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Every URL the registry publishes (the card's interfaces, catalogs, links) is PUBLIC_URL with a
 * path appended: a query or fragment in it ended up in the middle of each
 * ("http://reg.example.com?x=1/a2a/jsonrpc"), and a user name and password were handed to every
 * reader of the card. Refused, saying what to remove (the password itself never shown).
 */
function notABaseUrl(publicUrl: string): void {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(publicUrl)?.[1] ?? '';
  const at = authority.lastIndexOf('@');
  if (at !== -1) {
    throw new ConfigError(
      `invalid configuration: PUBLIC_URL must not carry a user name or password (got "${withoutPassword(publicUrl) ?? 'a URL with credentials'}"): the agent card would publish them in every URL; remove "${authority.slice(0, at).replace(/:.*/, ':…')}@" (clients authenticate with their own tokens)`,
    );
  }
  const extra = /[?#].*$/s.exec(publicUrl)?.[0];
  if (extra !== undefined) {
    throw new ConfigError(
      // Shown as given: a URL meant to be published, with no credentials (refused above).
      `invalid configuration: PUBLIC_URL must be the base URL peers reach the registry at, without a query or fragment (got "${publicUrl}"): the card's URLs are paths appended to it; remove "${extra}"`,
    );
  }
}

/**
 * The embeddings service's URL with a user name or password: the outbound guard never fetches a
 * URL that carries them, so hybrid ranking fell back to keywords at every search, without a
 * word at start-up, while each warning logged the password. Refused, saying where the key goes
 * (the password itself never shown).
 */
function embeddingsUrlWithoutCredentials(url: string | undefined): void {
  if (url === undefined) return;
  const { username, password } = new URL(url);
  if (!username && !password) return;
  throw new ConfigError(
    `invalid configuration: REGISTRY_EMBEDDINGS_URL must not carry a user name or password (got "${withoutPassword(url) ?? 'a URL with credentials'}"): the registry never sends a URL's credentials; remove "${username}${password ? ':…' : ''}@" and give the service's key in REGISTRY_EMBEDDINGS_KEY (sent as "Authorization: Bearer <key>")`,
  );
}

/**
 * The administrator's token given by the operator: REGISTRY_ADMIN_TOKEN, or the first line of
 * the file REGISTRY_ADMIN_TOKEN_FILE names (a Docker or Kubernetes secret, which keeps the token
 * out of the environment and `docker inspect`).
 */
function adminToken(value: string | undefined, file: string | undefined): string | undefined {
  if (value !== undefined && file !== undefined) {
    throw new ConfigError('invalid configuration: set REGISTRY_ADMIN_TOKEN or REGISTRY_ADMIN_TOKEN_FILE, not both');
  }
  if (file === undefined) return value;
  const text = readSettingFile('REGISTRY_ADMIN_TOKEN_FILE', file);
  const token = text.split('\n')[0]!.trim();
  if (token.length < MIN_TOKEN_CHARS) throw new ConfigError(`invalid configuration: REGISTRY_ADMIN_TOKEN_FILE must hold a token of at least ${MIN_TOKEN_CHARS} characters on its first line (got "${file}")`);
  const unpresentable = unpresentableToken(token);
  if (unpresentable) throw new ConfigError(`invalid configuration: the token on the first line of REGISTRY_ADMIN_TOKEN_FILE (${file}) ${unpresentable}`);
  // The file holds the token alone: a line copied from an env file (REGISTRY_ADMIN_TOKEN=...), or
  // the token in quotes, was taken whole, and the admin presenting the token itself was refused.
  const wrapped = wrappedLine(token, 'the token');
  if (wrapped) throw settingFileError('REGISTRY_ADMIN_TOKEN_FILE', file, `holds ${wrapped} on its first line, taken whole as the token: write the token alone on it, with no name, = or quotes`);
  return token;
}

/** How a setting file's first line wraps `what` (an env file's NAME=..., or quotes), said without the value; undefined when it does not. */
function wrappedLine(line: string, what: string): string | undefined {
  if (/^[A-Z][A-Z0-9_]*=[^=]/.test(line)) return `a variable assignment (${line.slice(0, line.indexOf('=') + 1)}…)`;
  return /^(["']).*\1$/.test(line) ? `${what} in quotes` : undefined;
}

/**
 * The PostgreSQL URL: DATABASE_URL, or the first line of the file DATABASE_URL_FILE names (a
 * Docker or Kubernetes secret, which keeps the password out of the environment), checked as
 * DATABASE_URL is; the file's text is never shown (it holds the password).
 */
function databaseUrl(e: Pick<Env, 'DATABASE_URL' | 'DATABASE_URL_FILE'>): string | undefined {
  if (e.DATABASE_URL !== undefined && e.DATABASE_URL_FILE !== undefined) {
    throw new ConfigError('invalid configuration: set DATABASE_URL or DATABASE_URL_FILE, not both');
  }
  const file = e.DATABASE_URL_FILE;
  if (file === undefined) return e.DATABASE_URL;
  const url = readSettingFile('DATABASE_URL_FILE', file).split('\n')[0]!.trim();
  if (url === '') throw settingFileError('DATABASE_URL_FILE', file, 'holds no URL on its first line');
  // Was "must be a postgres:// or postgresql:// URL (leave it unset for SQLite)", of DATABASE_URL=postgres://...
  const wrapped = wrappedLine(url, 'the URL');
  if (wrapped) throw settingFileError('DATABASE_URL_FILE', file, `holds ${wrapped} on its first line: write the URL alone on it, with no name, = or quotes`);
  const parsed = databaseUrlSchema.safeParse(url);
  if (!parsed.success) throw settingFileError('DATABASE_URL_FILE', file, `holds a URL on its first line that ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

function withAdminToken(tokens: Map<string, string>, admin: string | undefined): Map<string, string> {
  if (admin === undefined) return tokens;
  const owner = tokens.get(admin);
  if (owner !== undefined && owner !== ADMIN_PRINCIPAL) {
    throw new ConfigError(`invalid configuration: the admin token is also the token of "${owner}" in REGISTRY_TOKENS; give each principal its own`);
  }
  return new Map([...tokens, [admin, ADMIN_PRINCIPAL]]);
}

/**
 * REGISTRY_METRICS_TOKEN must be no principal's token: a scraper's token sits in a Prometheus
 * config, read by more people than the registry's secrets, and one that is also a principal's
 * (the admin's) would let whoever reads it register, change and delete as that principal.
 * `adminSource` says where the admin token came from (a setting, or the file the registry
 * generated it into, checked once that file is read: src/composition/build-registry.ts). Neither
 * token is ever part of the message.
 */
export function metricsTokenOfItsOwn(metrics: string | undefined, listed: ReadonlyMap<string, string>, admin: string | undefined, adminSource: string): void {
  if (metrics === undefined) return;
  const owner = listed.get(metrics);
  let whose: string;
  if (owner !== undefined) whose = `the token of "${owner}" in REGISTRY_TOKENS`;
  else if (metrics === admin) whose = `the admin token (${adminSource})`;
  else return;
  throw new ConfigError(
    `invalid configuration: REGISTRY_METRICS_TOKEN is also ${whose}: whoever scrapes /metrics with it could act as that principal, writes included; give REGISTRY_METRICS_TOKEN a token of its own`,
  );
}

/**
 * Principals of REGISTRY_TOKENS that look like the admin but are not: only `admin`, as written,
 * may act on every entry; `Admin:...` or `admn:...` made an ordinary principal, and the operator
 * found out when an admin's write was refused. Said at start-up (a principal may be named so).
 */
function nearAdmin(tokens: ReadonlyMap<string, string>): string[] {
  const principals = new Set([...tokens.values()].filter((p) => p !== ADMIN_PRINCIPAL && editDistance(p.toLowerCase(), ADMIN_PRINCIPAL) <= 1));
  return [...principals].map(
    (p) =>
      `REGISTRY_TOKENS gives a token to "${p}", which is not the admin: only the principal "${ADMIN_PRINCIPAL}", written so (lower case), may act on every entry; write it "${ADMIN_PRINCIPAL}:<token>" if it is meant to be the admin`,
  );
}

/**
 * alice:<token>;bob:<token> gave alice one token with ";bob:<token>" inside, and bob none. Said at
 * start-up (a warning: a generated token may hold ";x:" by chance), naming the principal only.
 */
function semicolonSeparated(tokens: ReadonlyMap<string, string>): string[] {
  return [...tokens].flatMap(([token, principal]) => {
    const next = /[;|]([A-Za-z][\w.@-]*):[^;|]{16,}$/.exec(token);
    // What follows the semicolon is not shown: should it be the token's own, it is part of a secret.
    return next ? [`REGISTRY_TOKENS gives "${principal}" a token with "${next[0][0]}<name>:" inside it, as if another principal followed a semicolon: separate the items with commas (${principal}:<token>,<name>:<token>)`] : [];
  });
}

/** Edit distance (insertions, deletions, substitutions) between two short names. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/**
 * REGISTRY_ variables the registry does not read. A misspelt setting is otherwise silently
 * ignored and its default applies (REGISTRY_PUBLIC_REED=false leaves the registry open), so
 * start-up names each one, with the setting it most likely meant. A warning, not an error: other
 * software (a container registry's CI credentials) uses the prefix too. With `read` (a command's
 * settings), only those meant for one of them.
 */
function unknownSettings(env: Record<string, string | undefined>, read?: readonly SettingName[]): string[] {
  const known = Object.keys(envSchema.shape);
  return Object.keys(env)
    // A name in another case whose setting reads a value is that variable (Windows' environment
    // is case-insensitive), or beside the one in force: nothing to say.
    .filter((name) => !known.includes(name) && !isServiceLink(name, env) && !(known.includes(name.toUpperCase()) && env[name.toUpperCase()] !== undefined))
    .sort()
    .flatMap((name) => {
      // Names are case-sensitive: registry_public_read=false, or DATABASE_URL_FIlE, was ignored
      // as silently as a name of another program's.
      const upper = name.toUpperCase();
      let meant: string | undefined;
      if (upper.startsWith('REGISTRY_')) meant = known.find((setting) => setting === upper) ?? likelySetting(upper.slice('REGISTRY_'.length), known);
      else {
        // Another program's variable, unless it is one of the registry's spelt wrong: a missed
        // DATABASE_URL (DATABSE_URL) ran a replica on its own SQLite, REGISTY_PUBLIC_READ an open one.
        meant = known.find((setting) => setting === upper) ?? nearSetting(upper, known);
        if (meant === undefined) return [];
      }
      // A command that reads a few settings names only what was meant for one of them: backup
      // with DATABSE_URL copied the SQLite file without a word, not the PostgreSQL database.
      if (read && !read.includes(meant as SettingName)) return [];
      const guess = meant ? ` (did you mean ${meant}?)` : '';
      return [`${name} is not a setting of the registry and is ignored${guess}; the settings are listed in the README's Configuration section`];
    });
}

/**
 * A variable Kubernetes sets in every pod for each Service of its namespace (service links):
 * <NAME>_SERVICE_HOST, <NAME>_SERVICE_PORT[_<port name>], <NAME>_PORT and
 * <NAME>_PORT_<port>_<PROTOCOL>[_PROTO|_PORT|_ADDR]. A Service named `registry`, the likely name
 * of this one's, gave each start seven warnings, REGISTRY_PORT=tcp://10.0.0.7:8080 "did you
 * mean PORT?" among them. Told by <NAME>_SERVICE_HOST, which Kubernetes always sets with them.
 */
function isServiceLink(name: string, env: Record<string, string | undefined>): boolean {
  const link = /^([A-Z0-9_]+?)_(?:SERVICE_HOST|SERVICE_PORT(?:_[A-Z0-9_]+)?|PORT(?:_\d+_(?:TCP|UDP|SCTP)(?:_(?:PROTO|PORT|ADDR))?)?)$/.exec(name);
  return link !== null && env[`${link[1]}_SERVICE_HOST`] !== undefined;
}

/**
 * The setting `name` (not REGISTRY_-prefixed, upper case) is within 2 edits of, if any. Only names
 * of 8 characters or more: shorter ones are too near other programs' (HOME is 2 from HOST). And
 * only a typo: the same words but for underscores (LOGLEVEL), or one word misspelt, by fewer edits
 * than half its length (DATABSE_URL, PUBLIC_URI); another word in its place is another program's
 * variable (DATABASE_SSL is not DATABASE_URL, GRPC_HOST not GRPC_PORT), which was named.
 */
function nearSetting(name: string, known: readonly string[]): string | undefined {
  if (name.length < 8) return undefined;
  const near = known
    .filter((setting) => Math.abs(setting.length - name.length) <= 2)
    .map((setting) => ({ setting, edits: editDistance(name, setting) }))
    .filter(({ setting, edits }) => edits <= 2 && misspelt(name, setting))
    .sort((x, y) => x.edits - y.edits)[0];
  return near?.setting;
}

/** Whether `name` reads as `setting` mistyped: see nearSetting. */
function misspelt(name: string, setting: string): boolean {
  if (name.replaceAll('_', '') === setting.replaceAll('_', '')) return true;
  const words = name.split('_');
  const settingWords = setting.split('_');
  if (words.length !== settingWords.length) return false;
  const differing = words.map((word, i) => [word, settingWords[i]!] as const).filter(([a, b]) => a !== b);
  return differing.length === 1 && editDistance(...differing[0]!) < Math.max(differing[0]![0].length, differing[0]![1].length) / 2;
}

/**
 * The setting an unknown REGISTRY_<rest> most likely meant, compared without the prefix: some
 * settings have none (PORT, HOST, PUBLIC_URL), and by the full names REGISTRY_PORT was nearer
 * REGISTRY_PROBE than PORT, REGISTRY_HOST near nothing. A setting the rest names exactly wins; else
 * the nearest within 3 edits, fewer than half the rest's length (REGISTRY_X means no setting).
 */
function likelySetting(rest: string, known: readonly string[]): string | undefined {
  const bare = (setting: string): string => (setting.startsWith('REGISTRY_') ? setting.slice('REGISTRY_'.length) : setting);
  const exact = known.find((setting) => bare(setting) === rest);
  if (exact) return exact;
  const nearest = known.map((setting) => ({ setting, edits: editDistance(rest, bare(setting)) })).sort((x, y) => x.edits - y.edits)[0];
  return nearest && nearest.edits <= 3 && nearest.edits < rest.length / 2 ? nearest.setting : undefined;
}

/**
 * Allow-listed JWKS URLs over plain http to another host: whoever is on the network path to it
 * can answer with their own keys, and every card they sign then verifies. Allowed (an internal
 * key server may have no certificate), but said at start-up.
 */
function plainHttpJku(urls: readonly string[]): string[] {
  return urls
    .filter((url) => {
      const { protocol, hostname } = new URL(url);
      return protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(hostname.toLowerCase()) && !/^127\./.test(hostname);
    })
    // Named with its query values masked: a key server's ?token=... is a secret, and this is logged.
    .map((url) => `REGISTRY_TRUSTED_JKU lists ${shownUrl(url, 'one of its URLs')}, a plain http URL: anyone on the network path to it can answer with their own keys, and every card those sign then verifies; publish the key set at an https URL`);
}

/**
 * An allow-listed JWKS is fetched again once the keys it gave are REGISTRY_TRUSTED_JKU_REFRESH_SECONDS
 * old (src/trust/trust-roots.ts), and they stay trusted REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS after
 * that good fetch: a staleness no longer than the refresh leaves no time at all, the first fetch
 * that fails ending their trust (and unverifying every card they signed) at once, which is not
 * what an operator who set either meant. Said at start-up, naming both.
 */
function jkuWithoutGrace(e: Pick<Env, 'REGISTRY_TRUSTED_JKU' | 'REGISTRY_TRUSTED_JKU_REFRESH_SECONDS' | 'REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS'>): string[] {
  const refresh = e.REGISTRY_TRUSTED_JKU_REFRESH_SECONDS;
  const stale = e.REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS;
  if (!e.REGISTRY_TRUSTED_JKU?.length || stale > refresh) return [];
  return [
    `REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS (${stale}) is not longer than REGISTRY_TRUSTED_JKU_REFRESH_SECONDS (${refresh}): an allow-listed JWKS is fetched again only once the keys it gave are that old, ` +
      'so the first fetch that fails ends their trust at once, unverifying the cards they signed; give REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS more than REGISTRY_TRUSTED_JKU_REFRESH_SECONDS (the defaults: 86400 and 3600)',
  ];
}

/**
 * The saved index is loaded at start-up and the change log after it replayed; one behind a log
 * trimmed past it is rebuilt instead (docs/scaling.md: 212 s at 1,000,000 entries, against 8 s).
 * Saved less often than the log keeps changes, a start after a crash or a kill (the save at
 * shutdown missed) found it so whenever writes had come meanwhile. Said at start-up, naming both.
 */
function snapshotOutlivesChangeLog(e: Pick<Env, 'REGISTRY_INDEX_SNAPSHOT_SECONDS' | 'REGISTRY_CHANGES_RETENTION_HOURS' | 'REGISTRY_EMBEDDINGS_URL'>): string[] {
  const seconds = e.REGISTRY_INDEX_SNAPSHOT_SECONDS;
  const kept = e.REGISTRY_CHANGES_RETENTION_HOURS;
  if (seconds === 0 || e.REGISTRY_EMBEDDINGS_URL !== undefined || seconds <= kept * 3600) return [];
  return [
    `REGISTRY_INDEX_SNAPSHOT_SECONDS (${seconds}) is longer than REGISTRY_CHANGES_RETENTION_HOURS (${kept}, ${kept * 3600} s) keeps the change log: after a crash, the saved index may be older than the log, and is then rebuilt from every entry instead of loaded (minutes at a million entries); ` +
      'save it more often than the log is trimmed (the defaults: 600 s and 24 h)',
  ];
}

/** localhost names (RFC 6761) and loopback addresses: each machine that dials one reaches itself. */
function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  const address = parseAddress(name);
  return address !== undefined && restrictedRange(address) === 'loopback';
}

/**
 * A PUBLIC_URL on loopback while HOST listens beyond it: peers on other machines reach the
 * registry, but every card, catalog entry and link it publishes names PUBLIC_URL, so each of
 * them is sent to its own machine. (A loopback HOST is a local try-out, where it is right.)
 */
function loopbackPublicUrl(publicUrl: string | undefined, host: string): string[] {
  if (publicUrl === undefined || isLoopbackHost(host) || !isLoopbackHost(new URL(publicUrl).hostname)) return [];
  return [
    `PUBLIC_URL is ${publicUrl}, a loopback address, while HOST=${host} listens beyond this machine: ` +
      'the agent card, catalog and every URL the registry publishes point clients on other machines at their own; ' +
      'fine for a try-out on this machine (a container\'s published port included), otherwise set PUBLIC_URL to the URL clients reach the registry at (e.g. https://registry.example.com)',
  ];
}

/** The environment as parsed: each setting's value, or its default. */
type Env = z.infer<typeof envSchema>;

/** A variable the registry reads. */
export type SettingName = keyof Env;

/** Every setting, in the order the schema lists them (the first bad one is the one named). */
export const SETTINGS: readonly SettingName[] = Object.keys(envSchema.shape) as SettingName[];

/**
 * How `name` is read: its default (`.parse(undefined)`) and bounds. Exported for the test that
 * holds the README's settings table to the schema (test/config-docs.test.ts): every setting
 * documented, with the default and range it has here.
 */
export const settingSchema = (name: SettingName): z.ZodType => envSchema.shape[name];

/** Settings without a default: unset is a meaning of its own (off, or derived from another). */
type OptionalSetting = { [K in SettingName]-?: undefined extends Env[K] ? K : never }[SettingName];

/**
 * What each setting without a default means unset, as the warning about one given empty says it
 * ("... taken as unset, so <this>"); the others say their default. Every such setting is here
 * (the type asks for each).
 */
const UNSET_MEANS: Record<OptionalSetting, string | ((e: Partial<Env>) => string)> = {
  PUBLIC_URL: 'it is made of HOST and PORT',
  GRPC_PORT: 'no gRPC is served',
  PUBLIC_GRPC_URL: "the card advertises PUBLIC_URL's host with GRPC_PORT",
  DATABASE_URL: (e) => (e.DATABASE_URL_FILE === undefined ? `SQLite in ${path.resolve(e.REGISTRY_DATA_DIR ?? DEFAULT_DATA_DIR)}` : 'DATABASE_URL_FILE names the database'),
  DATABASE_URL_FILE: (e) => (e.DATABASE_URL === undefined ? `SQLite in ${path.resolve(e.REGISTRY_DATA_DIR ?? DEFAULT_DATA_DIR)}` : 'DATABASE_URL names the database'),
  REGISTRY_ADMIN_TOKEN: 'no admin token from it',
  REGISTRY_ADMIN_TOKEN_FILE: 'no admin token from it',
  REGISTRY_MAX_BODY_BYTES: 'its default, 4 × REGISTRY_MAX_DOCUMENT_BYTES + 16 KB (at least 64 KB)',
  REGISTRY_MCP_ALLOWED_HOSTS: "the MCP endpoint answers PUBLIC_URL's host only",
  REGISTRY_HEADERS_TIMEOUT_SECONDS: 'its default, 10 (at most REGISTRY_REQUEST_TIMEOUT_SECONDS)',
  REGISTRY_PAGE_TOKEN_SECRET: 'page tokens are signed with a secret derived from the tokens',
  REGISTRY_CORS_ORIGINS: 'CORS is off',
  REGISTRY_METRICS_TOKEN: '/metrics needs no token of its own',
  REGISTRY_FETCH_ALLOW: 'no host is exempt from the outbound address rules',
  REGISTRY_DNS_SERVERS: 'the system resolver',
  REGISTRY_SYNONYMS: 'no synonym file',
  REGISTRY_EMBEDDINGS_URL: 'hybrid ranking is off',
  REGISTRY_EMBEDDINGS_KEY: 'no key is sent to the embeddings service',
  REGISTRY_EMBEDDINGS_DIMENSIONS: "the model's own dimensions",
  REGISTRY_INDEX_SNAPSHOT_DIR: 'the index is saved in the data directory',
  REGISTRY_HIDE_UNHEALTHY_SECONDS: 'unhealthy entries stay in search results',
  REGISTRY_TRUSTED_KEYS: 'no trusted keys file',
  REGISTRY_TRUSTED_JKU: 'no allow-listed JWKS URL',
  REGISTRY_SIGNING_KEY: "the registry's card is not signed",
  REGISTRY_RETIRED_SIGNING_KEYS: 'only the current signing key is published',
};

/** After "taken as unset, so": what the setting is without a value. */
function unsetMeaning(name: SettingName, e: Partial<Env>): string {
  if (name in UNSET_MEANS) {
    const means = UNSET_MEANS[name as OptionalSetting];
    return typeof means === 'string' ? means : means(e);
  }
  if (name === 'REGISTRY_DATA_DIR') return dataDirUnsetMeans();
  if (name === 'REGISTRY_TOKENS') return 'no principal has a token from it';
  if (name === 'REGISTRY_PUBLIC_READ') return 'its default, true: anyone may read the registry without a token';
  const value: unknown = envSchema.shape[name].parse(undefined);
  return `its default, ${String(value)}`;
}

/**
 * Settings that act only beside another, or only without one: given where it is not as they
 * need, they change nothing, which start-up says (a warning, not a refusal: nothing is served
 * otherwise than the operator could expect). One that would publish what is not served is
 * refused instead (PUBLIC_GRPC_URL without GRPC_PORT, in loadConfig).
 */
interface DependentSettings {
  settings: readonly SettingName[];
  /** The settings `inEffect` reads: the rule holds where a command reads them all. */
  on: readonly SettingName[];
  inEffect(e: Partial<Env>): boolean;
  /** Why they change nothing, after "has no effect". */
  why: string;
  /** What to set instead of unsetting it, if anything. */
  fix?: string;
}

/** Exported for test/config-docs.test.ts: the README names each group where it lists them. */
export const DEPENDENT_SETTINGS: readonly DependentSettings[] = [
  {
    settings: ['REGISTRY_EMBEDDINGS_MODEL', 'REGISTRY_EMBEDDINGS_KEY', 'REGISTRY_EMBEDDINGS_DIMENSIONS'],
    on: ['REGISTRY_EMBEDDINGS_URL'],
    inEffect: (e) => e.REGISTRY_EMBEDDINGS_URL !== undefined,
    why: 'without REGISTRY_EMBEDDINGS_URL, the embeddings service of hybrid ranking (off without it)',
    fix: 'set REGISTRY_EMBEDDINGS_URL',
  },
  {
    settings: ['REGISTRY_TRUSTED_JKU_REFRESH_SECONDS', 'REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS', 'REGISTRY_TRUSTED_JKU_SCOPE'],
    on: ['REGISTRY_TRUSTED_JKU'],
    inEffect: (e) => (e.REGISTRY_TRUSTED_JKU?.length ?? 0) > 0,
    why: 'without REGISTRY_TRUSTED_JKU, the allow-listed JWKS URLs it is about',
    fix: 'list them in REGISTRY_TRUSTED_JKU',
  },
  {
    settings: ['REGISTRY_RETIRED_SIGNING_KEYS'],
    on: ['REGISTRY_SIGNING_KEY'],
    inEffect: (e) => e.REGISTRY_SIGNING_KEY !== undefined,
    why: 'without REGISTRY_SIGNING_KEY, the key the registry signs its card with (without it, no key set is published)',
    fix: 'set REGISTRY_SIGNING_KEY to the key it signs with now',
  },
  {
    settings: ['REGISTRY_SQLITE_LOCK_WAIT_MS', 'REGISTRY_SQLITE_CHECK_HOURS'],
    on: ['DATABASE_URL', 'DATABASE_URL_FILE'],
    inEffect: (e) => e.DATABASE_URL === undefined && e.DATABASE_URL_FILE === undefined,
    why: "with DATABASE_URL: it is SQLite's, and DATABASE_URL (or DATABASE_URL_FILE) stores the entries in PostgreSQL",
  },
  {
    settings: ['REGISTRY_POSTGRES_STATEMENT_TIMEOUT_MS'],
    on: ['DATABASE_URL', 'DATABASE_URL_FILE'],
    inEffect: (e) => e.DATABASE_URL !== undefined || e.DATABASE_URL_FILE !== undefined,
    why: "without DATABASE_URL: it is PostgreSQL's, and the entries are stored in SQLite",
    fix: 'set DATABASE_URL (or DATABASE_URL_FILE)',
  },
  {
    settings: ['REGISTRY_RATE_WRITES_PER_MINUTE', 'REGISTRY_RATE_READS_PER_MINUTE', 'REGISTRY_RATE_REQUESTS_PER_MINUTE', 'REGISTRY_MAX_STREAMS_PER_CLIENT', 'REGISTRY_RATE_IPV6_PREFIX'],
    on: ['REGISTRY_RATE_LIMITS'],
    inEffect: (e) => e.REGISTRY_RATE_LIMITS !== false,
    why: 'with REGISTRY_RATE_LIMITS=false, which turns every rate limit and the stream cap off',
    fix: 'set REGISTRY_RATE_LIMITS=true',
  },
  {
    settings: ['REGISTRY_INDEX_SNAPSHOT_DIR', 'REGISTRY_INDEX_SNAPSHOT_SECONDS'],
    on: ['REGISTRY_EMBEDDINGS_URL'],
    inEffect: (e) => e.REGISTRY_EMBEDDINGS_URL === undefined,
    why: 'with REGISTRY_EMBEDDINGS_URL: with hybrid ranking the search index is never saved, it is built at every start',
  },
  {
    settings: ['REGISTRY_INDEX_SNAPSHOT_DIR'],
    on: ['REGISTRY_INDEX_SNAPSHOT_SECONDS'],
    inEffect: (e) => e.REGISTRY_INDEX_SNAPSHOT_SECONDS !== 0,
    why: 'with REGISTRY_INDEX_SNAPSHOT_SECONDS=0, which turns the saved index off',
    fix: 'set REGISTRY_INDEX_SNAPSHOT_SECONDS to how often to save it (e.g. 600)',
  },
  {
    settings: ['REGISTRY_SEARCH_CACHE_ENTRIES', 'REGISTRY_SEARCH_CACHE_BYTES'],
    on: ['REGISTRY_EMBEDDINGS_URL', 'REGISTRY_HIDE_UNHEALTHY_SECONDS'],
    inEffect: (e) => e.REGISTRY_EMBEDDINGS_URL === undefined && e.REGISTRY_HIDE_UNHEALTHY_SECONDS === undefined,
    why: 'with REGISTRY_EMBEDDINGS_URL or REGISTRY_HIDE_UNHEALTHY_SECONDS, whose answers change while the index does not: no search is cached',
  },
];

/**
 * A value wrapped in quotes ("/data", 'https://registry.example.com') is a quoting mistake: the
 * quotes are part of the value wherever a file is taken as written (`docker run --env-file`, a
 * Kubernetes value quoted twice). REGISTRY_DATA_DIR="/data" was a directory named `"` under the
 * working directory, the database written there and lost with the container; a token kept its
 * quotes, and no client presenting it without them got in. Refused, naming the setting; the value
 * shown as other settings' are (never a secret's).
 */
function quotedValue(name: SettingName, value: string): void {
  if (!/^(["'])[\s\S]*\1$/.test(value) || value.length < 2) return;
  const shown = SECRET_VARIABLES.has(name) ? undefined : shownSettingValue(value.slice(1, -1));
  const got = shown === undefined ? '' : ` (got ${value[0]}${clipped(shown, MAX_SHOWN_CHARS)}${value[0]}, quotes included)`;
  throw new ConfigError(
    `invalid configuration: ${name} is enclosed in quotes, which are taken as part of its value${got}: whatever set it kept them (docker run --env-file takes each line as written); remove the quotes`,
  );
}

/**
 * A shell's `${NAME}` or `~/` nobody expanded: `docker run --env-file`, systemd's Environment= and
 * Kubernetes take them as written. REGISTRY_DATA_DIR=~/registry was a directory named `~` under the
 * working directory (the database there, not in the home directory), and
 * DATABASE_URL=postgres://registry:${PG_PASSWORD}@db/registry failed at the first connection as a
 * wrong password. Refused, naming the setting and the reference (a name, never a value).
 */
function unexpanded(name: SettingName, value: string): void {
  const reference = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^}]*)?\}/.exec(value)?.[0];
  if (reference !== undefined) {
    throw new ConfigError(
      `invalid configuration: ${name} holds ${reference.replace(/^(\$\{[A-Za-z0-9_]+).*\}$/, '$1}')}, a variable reference nothing expanded (docker run --env-file, systemd's Environment= and Kubernetes take it as written): give the value itself, or set it from a shell or docker compose, which expand it`,
    );
  }
  if (PATH_SETTINGS.has(name) && /^~(?:\/|$)/.test(value)) {
    throw new ConfigError(
      `invalid configuration: ${name} begins with ~, which only a shell expands to the home directory (here it would name a directory called "~" under ${process.cwd()}): give the full path (e.g. ${path.join('/home/registry', value.slice(1))})`,
    );
  }
}

/**
 * GRPC_PORT=tcp://10.0.0.9:50051: Kubernetes sets <NAME>_PORT so for each Service of the namespace
 * (service links), and with a Service named `grpc` the registry refused to start over a setting no
 * one gave. Such a value, beside the <NAME>_SERVICE_HOST set with it, is unset and said; `<NAME>`
 * returned, else undefined.
 */
function serviceLinkPort(name: SettingName, env: NodeJS.ProcessEnv): string | undefined {
  const service = /^([A-Z0-9_]+)_PORT$/.exec(name)?.[1];
  const value = env[name];
  if (service === undefined || value === undefined || env[`${service}_SERVICE_HOST`] === undefined) return undefined;
  return /^(?:tcp|udp|sctp):\/\/\S+:\d+$/.test(value) ? service : undefined;
}

/** Settings that take a comma-separated list, which may come out holding no item. */
const LIST_SETTINGS = new Set<SettingName>(['REGISTRY_TOKENS', 'REGISTRY_MCP_ALLOWED_HOSTS', 'REGISTRY_CORS_ORIGINS', 'REGISTRY_FETCH_ALLOW', 'REGISTRY_TRUSTED_JKU']);

/**
 * A list setting given only commas and spaces (REGISTRY_TOKENS="${ALICE},${BOB}" in a compose file,
 * both unset: ","): read as unset, as an empty variable is, and said. It was taken as a list of
 * nothing, without a word: no principal had a token, and the registry generated an admin token.
 */
function blankList(name: SettingName, value: string | undefined): boolean {
  return value !== undefined && value !== '' && LIST_SETTINGS.has(name) && onlyCommas(value);
}

/** What "${A},${B}" comes out as with both unset. */
function onlyCommas(value: string): boolean {
  return value.split(',').every((item) => item.trim() === '');
}

/**
 * REGISTRY_DNS_SERVERS given only commas and spaces is refused, not taken as unset as the list
 * settings above are: unset, names would be resolved by the system resolver, not the servers
 * meant (one that answers internal names the system's does not). It said only "lists no server":
 * said here as those settings' warning says it, the likely cause and both ways out, and why it is
 * refused when an empty REGISTRY_DNS_SERVERS is taken as unset (as every empty variable is, the
 * README's rule): an operator who saw the one a warning found the other a refusal, unexplained.
 * The only check of a list of no server: parseDnsServers is given none.
 */
function blankDnsServers(name: SettingName, value: string): void {
  if (name !== 'REGISTRY_DNS_SERVERS' || !onlyCommas(value)) return;
  throw new ConfigError(
    `invalid configuration: ${name} lists nothing (got "${value}"; unset shell variables, as in "\${A},\${B}"?): refused, not taken as unset as the other lists are, because names would then be resolved by the system resolver instead of the servers meant; list the DNS servers' IP addresses (e.g. ${name}=10.0.0.53,1.1.1.1:5353), or unset ${name} to use the system resolver`,
  );
}

/**
 * The settings `names` of `env`, parsed and checked, with what start-up says about them. Every
 * loader reads the environment through here, each only the settings it uses: a command is not
 * refused over a setting it has no use for (`backup` over HOST=0.0.0.0 without PUBLIC_URL, as
 * the container image sets HOST). Throws ConfigError naming the first bad one.
 *
 * An empty variable is unset (docker compose's `FOO=${FOO}` sets FOO empty when the shell has
 * none), but said: DATABASE_URL="$PG_URL" with PG_URL unset stored on SQLite, without a word
 * (./empty-setting.ts, whose words the CLI says too of the REGISTRY_DATA_DIR it reads).
 */
function readSettings<K extends SettingName>(env: NodeJS.ProcessEnv, names: readonly K[]): { e: Pick<Env, K>; warnings: string[] } {
  const given = (name: SettingName): boolean => env[name] !== undefined && env[name] !== '' && !blankList(name, env[name]) && !serviceLinkPort(name, env);
  for (const name of names.filter(given)) {
    quotedValue(name, env[name]!);
    unexpanded(name, env[name]!);
    blankDnsServers(name, env[name]!);
  }
  // The settings not read are left out: the schema gives them their defaults, which it does not check.
  const cleaned = Object.fromEntries(names.filter(given).map((name) => [name, env[name]]));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    const value = String(cleaned[name] ?? '');
    // A URL's password (DATABASE_URL, user:pass@ or ?password=) is never shown either (shownSettingValue).
    const safe = shownSettingValue(value);
    const shown = SECRET_VARIABLES.has(name) || safe === undefined ? '' : ` (got "${clipped(safe, MAX_SHOWN_CHARS)}")`;
    const said = settingIssueMessage(issue, value);
    throw new ConfigError(`invalid configuration: ${name} ${said}${shown}${settingExample(name as SettingName, said)}`);
  }
  const e: Pick<Env, K> = parsed.data;
  const read = new Set<SettingName>(names);
  const warnings: string[] = [];
  for (const name of names) {
    if (env[name] === '') {
      warnings.push(emptySettingWarning(name, unsetMeaning(name, e)));
      continue;
    }
    const link = serviceLinkPort(name, env);
    if (link) {
      warnings.push(
        `${name} is ${env[name]}, which Kubernetes sets for the Service named ${link.toLowerCase()} in this namespace: taken as unset, so ${unsetMeaning(name, e)}; to serve it, set ${name} in the pod's environment (it wins over the Service's)`,
      );
      continue;
    }
    if (blankList(name, env[name])) {
      warnings.push(`${name} lists nothing (got "${env[name]}"): taken as unset, so ${unsetMeaning(name, e)} (unset shell variables, as in "\${A},\${B}"?)`);
      continue;
    }
    if (!given(name)) continue;
    const idle = DEPENDENT_SETTINGS.find((d) => d.settings.includes(name) && d.on.every((other) => read.has(other)) && !d.inEffect(e));
    if (idle) warnings.push(`${name} is set but has no effect ${idle.why}: ${idle.fix ? `${idle.fix}, or unset ${name}` : `unset ${name}`}`);
  }
  return { e, warnings };
}

/** The most of a refused value an error repeats: enough to recognise it (a 1,100-character PUBLIC_GRPC_URL was shown whole). */
const MAX_SHOWN_CHARS = 100;

/**
 * An issue of a setting as said after its name. Every setting's schema words its own ("must be a
 * whole number from 1 to 100"); one that does not (a check added without a message) is said in the
 * words of refused operation arguments rather than zod's ("Too big: expected string to have
 * <=1024 characters"), without what was sent: the error shows the value itself, secrets masked.
 */
function settingIssueMessage(issue: z.core.$ZodIssue, value: string): string {
  if (issue.code === 'custom' || !/^(Invalid|Too (big|small))\b/.test(issue.message)) return issue.message;
  return issueMessage(issue, [], undefined, value)
    .replace(/^The value /, '')
    .replace(/; got [^;]*$/, '');
}

/**
 * Settings without a default to show as an example, as an operator would set them; a secret has
 * none (a token written in a message ends up in logs and tickets).
 */
const SETTING_EXAMPLES: Partial<Record<SettingName, string>> = {
  PUBLIC_URL: 'https://registry.example.com',
  // No password: an example is copied, and a password in it would be everyone's.
  DATABASE_URL: 'postgres://registry@db.example.com:5432/registry',
  GRPC_PORT: '50051',
  REGISTRY_MAX_BODY_BYTES: '1048576',
  REGISTRY_HEADERS_TIMEOUT_SECONDS: '10',
  REGISTRY_CORS_ORIGINS: 'https://app.example.com,https://admin.example.com',
  REGISTRY_MCP_ALLOWED_HOSTS: 'registry.example.com,registry.internal',
  REGISTRY_EMBEDDINGS_URL: 'https://api.openai.com/v1',
  REGISTRY_EMBEDDINGS_DIMENSIONS: '1536',
  REGISTRY_HIDE_UNHEALTHY_SECONDS: '86400',
  REGISTRY_TRUSTED_JKU: 'https://keys.example.com/.well-known/jwks.json',
};

/**
 * "; e.g. PORT=8080 (the default)": a value the setting takes, written as it is set, unless the
 * message gives one already or says what to remove. The default where there is one (it is what
 * unsetting the variable gives), else an example of SETTING_EXAMPLES.
 */
function settingExample(name: SettingName, message: string): string {
  if (SECRET_VARIABLES.has(name) || /\be\.g\.|\blike\b|\bremove\b|\bwrite it as\b/.test(message)) return '';
  const schema: z.ZodType | undefined = envSchema.shape[name];
  const fallback = schema instanceof z.ZodDefault ? (schema.def.defaultValue as unknown) : undefined;
  if (['string', 'number', 'boolean'].includes(typeof fallback)) return `; e.g. ${name}=${String(fallback)} (the default)`;
  const example = SETTING_EXAMPLES[name];
  return example === undefined ? '' : `; e.g. ${name}=${example}`;
}

/** Where the entries are: the data directory (SQLite's file, and the registry's other files) and DATABASE_URL. */
export interface StorageLocation {
  dataDir: string;
  /** postgres://... selects PostgreSQL; absent means the embedded SQLite in dataDir. */
  databaseUrl?: string;
  /** Things to tell the user (an empty variable taken as unset). */
  warnings: string[];
}

/**
 * REGISTRY_DATA_DIR and DATABASE_URL alone, as the registry reads them: for the commands that
 * work on its storage without serving it (backup, restore, migrate).
 */
export function loadStorageLocation(env: NodeJS.ProcessEnv = process.env): StorageLocation {
  const names = ['REGISTRY_DATA_DIR', 'DATABASE_URL', 'DATABASE_URL_FILE'] as const;
  const { e, warnings } = readSettings(env, names);
  return { dataDir: path.resolve(e.REGISTRY_DATA_DIR), databaseUrl: databaseUrl(e), warnings: [...unknownSettings(env, names), ...warnings] };
}

/** What `a2a-registry import` reads: the storage, and the checks of a registration. */
export interface ImportConfig extends Pick<RegistryConfig, 'dataDir' | 'databaseUrl' | 'sqliteLockWaitMs' | 'maxDocumentBytes' | 'maxBodyBytes' | 'warnInsecureHttp' | 'fetch'> {
  /** Where the registry saves its search index (REGISTRY_INDEX_SNAPSHOT_DIR): evidence of an emptied database (composition/emptied-database.ts). */
  search: Pick<RegistryConfig['search'], 'snapshotDir'>;
  quota: Pick<RegistryConfig['quota'], 'maxRevisions'>;
  trust: Pick<TrustConfig, 'keysFile' | 'jkuUrls' | 'jkuScope' | 'requireVerified'>;
  warnings?: string[];
}

const IMPORT_SETTINGS = [
  'PUBLIC_URL',
  'REGISTRY_DATA_DIR',
  'DATABASE_URL',
  'DATABASE_URL_FILE',
  'REGISTRY_SQLITE_LOCK_WAIT_MS',
  'REGISTRY_INDEX_SNAPSHOT_DIR',
  'REGISTRY_MAX_DOCUMENT_BYTES',
  'REGISTRY_MAX_BODY_BYTES',
  'REGISTRY_MAX_REVISIONS',
  'REGISTRY_FETCH_ALLOW',
  'REGISTRY_FETCH_TIMEOUT_MS',
  'REGISTRY_DNS_SERVERS',
  'REGISTRY_TRUSTED_KEYS',
  'REGISTRY_TRUSTED_JKU',
  'REGISTRY_TRUSTED_JKU_SCOPE',
  'REGISTRY_REQUIRE_VERIFIED',
] as const satisfies readonly SettingName[];

/**
 * The settings `a2a-registry import` uses, as the registry reads them; not HOST, PORT, the
 * tokens or any other the registry needs to serve. PUBLIC_URL only for its scheme: documents'
 * http: URLs are warned about where the registry's own is https, as the registry does.
 * REGISTRY_INDEX_SNAPSHOT_DIR only to find the saved index an emptied database is told by.
 */
export function loadImportConfig(env: NodeJS.ProcessEnv = process.env): ImportConfig {
  const { e, warnings } = readSettings(env, IMPORT_SETTINGS);
  requireTrustRoots(e);
  return {
    dataDir: path.resolve(e.REGISTRY_DATA_DIR),
    databaseUrl: databaseUrl(e),
    sqliteLockWaitMs: e.REGISTRY_SQLITE_LOCK_WAIT_MS,
    search: { snapshotDir: path.resolve(e.REGISTRY_INDEX_SNAPSHOT_DIR ?? e.REGISTRY_DATA_DIR) },
    ...bodyLimits(e),
    warnInsecureHttp: e.PUBLIC_URL === undefined ? false : new URL(e.PUBLIC_URL).protocol === 'https:',
    quota: { maxRevisions: e.REGISTRY_MAX_REVISIONS },
    trust: {
      keysFile: e.REGISTRY_TRUSTED_KEYS === undefined ? undefined : path.resolve(e.REGISTRY_TRUSTED_KEYS),
      jkuUrls: e.REGISTRY_TRUSTED_JKU ?? [],
      jkuScope: e.REGISTRY_TRUSTED_JKU_SCOPE,
      requireVerified: e.REGISTRY_REQUIRE_VERIFIED,
    },
    fetch: fetchSettings(e),
    warnings: [...unknownSettings(env, IMPORT_SETTINGS), ...warnings, ...plainHttpJku(e.REGISTRY_TRUSTED_JKU ?? [])],
  };
}

function requireTrustRoots(e: Pick<Env, 'REGISTRY_REQUIRE_VERIFIED' | 'REGISTRY_TRUSTED_KEYS' | 'REGISTRY_TRUSTED_JKU'>): void {
  if (e.REGISTRY_REQUIRE_VERIFIED && !e.REGISTRY_TRUSTED_KEYS && !e.REGISTRY_TRUSTED_JKU?.length) {
    throw new ConfigError('invalid configuration: REGISTRY_REQUIRE_VERIFIED=true needs trusted keys: set REGISTRY_TRUSTED_KEYS (a JWKS file) or REGISTRY_TRUSTED_JKU (JWKS URLs)');
  }
}

/** The document and request body limits, the second derived from the first unless given, and refused below what the first needs. */
function bodyLimits(e: Pick<Env, 'REGISTRY_MAX_DOCUMENT_BYTES' | 'REGISTRY_MAX_BODY_BYTES'>): { maxDocumentBytes: number; maxBodyBytes: number } {
  // A 10 KB document travels base64-encoded (4/3) inside JSON-RPC framing: allow generous room.
  const maxBodyBytes = e.REGISTRY_MAX_BODY_BYTES ?? Math.max(64 * 1024, e.REGISTRY_MAX_DOCUMENT_BYTES * 4 + 16 * 1024);
  // A body limit below that would refuse documents the document limit accepts, with a 413 that
  // tells the sender their document is too large: refuse the setting instead.
  const minBodyBytes = Math.ceil(e.REGISTRY_MAX_DOCUMENT_BYTES / 3) * 4 + 4096;
  if (maxBodyBytes < minBodyBytes) {
    throw new ConfigError(
      `invalid configuration: REGISTRY_MAX_BODY_BYTES must be at least ${minBodyBytes} (got "${maxBodyBytes}"): a document of REGISTRY_MAX_DOCUMENT_BYTES (${e.REGISTRY_MAX_DOCUMENT_BYTES}) travels base64-encoded, 4/3 of its size plus the message around it; raise it, or lower REGISTRY_MAX_DOCUMENT_BYTES`,
    );
  }
  return { maxDocumentBytes: e.REGISTRY_MAX_DOCUMENT_BYTES, maxBodyBytes };
}

function fetchSettings(e: Pick<Env, 'REGISTRY_FETCH_ALLOW' | 'REGISTRY_FETCH_TIMEOUT_MS' | 'REGISTRY_DNS_SERVERS'>): FetchConfig {
  return { allow: e.REGISTRY_FETCH_ALLOW ?? AllowList.EMPTY, timeoutMs: e.REGISTRY_FETCH_TIMEOUT_MS, ...(e.REGISTRY_DNS_SERVERS ? { dnsServers: e.REGISTRY_DNS_SERVERS } : {}) };
}

/**
 * The settings `env` gives, as `e` took them ("yes" is true, " 5 " is 5, a path is absolute), for
 * the start-up log: an operator sees what the registry runs with, not only what was written.
 * Never a secret: tokens are `***` (REGISTRY_TOKENS shows its principals), a URL's password and
 * query values are masked (shownSettingValue), and what cannot be told safe is `***`.
 */
function shownSettings(env: NodeJS.ProcessEnv, e: Env): Record<string, ShownSetting> {
  const masked = (value: string): string => shownSettingValue(value) ?? '***';
  const shown: Record<string, ShownSetting> = {};
  for (const name of SETTINGS) {
    const raw = env[name];
    if (raw === undefined || raw === '' || blankList(name, raw) || serviceLinkPort(name, env)) continue;
    const value: unknown = e[name];
    if (name === 'REGISTRY_TOKENS') shown[name] = `*** (principals: ${[...new Set(e.REGISTRY_TOKENS.values())].join(', ')})`;
    else if (SECRET_VARIABLES.has(name)) shown[name] = '***';
    else if (typeof value === 'number' || typeof value === 'boolean') shown[name] = value;
    else if (Array.isArray(value)) shown[name] = value.map((item) => masked(String(item)));
    else if (PATH_SETTINGS.has(name)) shown[name] = masked(path.resolve(raw));
    else shown[name] = masked(typeof value === 'string' ? value : raw.trim());
  }
  return shown;
}

/** Settings that name a file or directory, relative to the working directory. */
const PATH_SETTINGS = new Set<SettingName>([
  'REGISTRY_DATA_DIR',
  'DATABASE_URL_FILE',
  'REGISTRY_ADMIN_TOKEN_FILE',
  'REGISTRY_SYNONYMS',
  'REGISTRY_INDEX_SNAPSHOT_DIR',
  'REGISTRY_TRUSTED_KEYS',
  'REGISTRY_SIGNING_KEY',
  'REGISTRY_RETIRED_SIGNING_KEYS',
]);

/** Parses the environment, every setting of the registry; throws ConfigError with one line naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): RegistryConfig {
  const { e, warnings } = readSettings(env, SETTINGS);
  requireTrustRoots(e);
  // Probes run on the refresh loop, which REGISTRY_REFRESH_SECONDS=0 turns off: probing nothing,
  // without a word, is not what the operator asked for.
  if (e.REGISTRY_PROBE && e.REGISTRY_REFRESH_SECONDS === 0) {
    throw new ConfigError(
      'invalid configuration: REGISTRY_PROBE=true needs the refresh loop, which REGISTRY_REFRESH_SECONDS=0 turns off: set REGISTRY_REFRESH_SECONDS to how often to check (e.g. 3600), or leave REGISTRY_PROBE unset',
    );
  }
  const headersTimeoutSeconds = e.REGISTRY_HEADERS_TIMEOUT_SECONDS ?? Math.min(10, e.REGISTRY_REQUEST_TIMEOUT_SECONDS);
  if (headersTimeoutSeconds > e.REGISTRY_REQUEST_TIMEOUT_SECONDS) {
    throw new ConfigError(
      // Said with the way out: the message named both settings but not which to change.
      `invalid configuration: REGISTRY_HEADERS_TIMEOUT_SECONDS must not exceed REGISTRY_REQUEST_TIMEOUT_SECONDS (got ${headersTimeoutSeconds} > ${e.REGISTRY_REQUEST_TIMEOUT_SECONDS}): the headers are part of the request, which must arrive whole within the request timeout; lower REGISTRY_HEADERS_TIMEOUT_SECONDS, or raise REGISTRY_REQUEST_TIMEOUT_SECONDS`,
    );
  }
  // Both servers bind HOST: the second one failed at start-up with gRPC's "No address added out
  // of total 1 resolved … EADDRINUSE", which does not say the two settings collide.
  if (e.GRPC_PORT !== undefined && e.GRPC_PORT !== 0 && e.GRPC_PORT === e.PORT) {
    throw new ConfigError(
      `invalid configuration: GRPC_PORT and PORT are both ${e.PORT}: the gRPC binding needs a port of its own beside HTTP's: give it another (e.g. 50051), or leave it unset to serve no gRPC`,
    );
  }
  if (e.PUBLIC_GRPC_URL !== undefined && e.GRPC_PORT === undefined) {
    throw new ConfigError('invalid configuration: PUBLIC_GRPC_URL is set but GRPC_PORT is not; set GRPC_PORT to serve gRPC, or unset PUBLIC_GRPC_URL');
  }
  const publicUrl = resolvePublicUrl(e.PUBLIC_URL, e.HOST, e.PORT);
  embeddingsUrlWithoutCredentials(e.REGISTRY_EMBEDDINGS_URL);
  const admin = adminToken(e.REGISTRY_ADMIN_TOKEN, e.REGISTRY_ADMIN_TOKEN_FILE);
  const tokens = withAdminToken(e.REGISTRY_TOKENS, admin);
  metricsTokenOfItsOwn(e.REGISTRY_METRICS_TOKEN, e.REGISTRY_TOKENS, admin, e.REGISTRY_ADMIN_TOKEN_FILE !== undefined ? 'REGISTRY_ADMIN_TOKEN_FILE' : 'REGISTRY_ADMIN_TOKEN');
  const { maxDocumentBytes, maxBodyBytes } = bodyLimits(e);
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl,
    dataDir: path.resolve(e.REGISTRY_DATA_DIR),
    databaseUrl: databaseUrl(e),
    sqliteLockWaitMs: e.REGISTRY_SQLITE_LOCK_WAIT_MS,
    sqliteCheckHours: e.REGISTRY_SQLITE_CHECK_HOURS,
    postgresStatementTimeoutMs: e.REGISTRY_POSTGRES_STATEMENT_TIMEOUT_MS,
    tokens,
    publicRead: e.REGISTRY_PUBLIC_READ,
    maxDocumentBytes,
    maxBodyBytes,
    logLevel: e.LOG_LEVEL,
    cardMaxAgeSeconds: e.REGISTRY_CARD_MAX_AGE,
    catalogMaxAgeSeconds: e.REGISTRY_CATALOG_MAX_AGE,
    mcpAllowedHosts: e.REGISTRY_MCP_ALLOWED_HOSTS ?? [],
    taskRetention: { maxAgeMs: e.REGISTRY_TASK_RETENTION_HOURS * 3600_000, maxCount: e.REGISTRY_TASK_RETENTION_COUNT },
    taskMemory: { maxTasks: e.REGISTRY_TASK_MEMORY_COUNT, maxBytes: e.REGISTRY_TASK_MEMORY_BYTES, ttlMs: e.REGISTRY_TASK_MEMORY_TTL_SECONDS * 1000 },
    changeRetentionMs: e.REGISTRY_CHANGES_RETENTION_HOURS * 3600_000,
    quota: { maxEntriesPerOwner: e.REGISTRY_MAX_ENTRIES_PER_OWNER, maxRevisions: e.REGISTRY_MAX_REVISIONS },
    connections: {
      requestTimeoutMs: e.REGISTRY_REQUEST_TIMEOUT_SECONDS * 1000,
      headersTimeoutMs: headersTimeoutSeconds * 1000,
      keepAliveTimeoutMs: e.REGISTRY_KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
      maxConnections: e.REGISTRY_MAX_CONNECTIONS,
      sseHeartbeatMs: Math.round(e.REGISTRY_SSE_HEARTBEAT_SECONDS * 1000),
      shutdownGraceMs: Math.round(e.REGISTRY_SHUTDOWN_GRACE_SECONDS * 1000),
      grpcMaxConnectionAgeMs: Math.round(e.REGISTRY_GRPC_MAX_CONNECTION_AGE_SECONDS * 1000),
    },
    warnInsecureHttp: publicUrl.startsWith('https:'),
    pageTokenSecret: e.REGISTRY_PAGE_TOKEN_SECRET,
    hardening: {
      maxJsonDepth: e.REGISTRY_MAX_JSON_DEPTH,
      maxQueryChars: e.REGISTRY_MAX_QUERY_CHARS,
      rateLimits: e.REGISTRY_RATE_LIMITS,
      writesPerMinute: e.REGISTRY_RATE_WRITES_PER_MINUTE,
      readsPerMinute: e.REGISTRY_RATE_READS_PER_MINUTE,
      requestsPerMinute: e.REGISTRY_RATE_REQUESTS_PER_MINUTE,
      maxStreamsPerClient: e.REGISTRY_MAX_STREAMS_PER_CLIENT,
      ipv6Prefix: e.REGISTRY_RATE_IPV6_PREFIX,
      corsOrigins: e.REGISTRY_CORS_ORIGINS ?? [],
      trustProxy: e.REGISTRY_TRUST_PROXY,
      metricsToken: e.REGISTRY_METRICS_TOKEN,
    },
    watches: { maxPerPrincipal: e.REGISTRY_MAX_WATCHES, ttlMs: e.REGISTRY_WATCH_TTL_SECONDS * 1000, bufferEvents: e.REGISTRY_WATCH_BUFFER, maxTracked: e.REGISTRY_WATCH_MAX_MATCHES, webhookRetryMs: Math.round(e.REGISTRY_WEBHOOK_RETRY_SECONDS * 1000), httpCredentials: e.REGISTRY_WEBHOOK_HTTP_CREDENTIALS },
    fetch: fetchSettings(e),
    search: {
      synonymsFile: e.REGISTRY_SYNONYMS === undefined ? undefined : path.resolve(e.REGISTRY_SYNONYMS),
      embeddings:
        e.REGISTRY_EMBEDDINGS_URL === undefined
          ? undefined
          : { url: e.REGISTRY_EMBEDDINGS_URL, model: e.REGISTRY_EMBEDDINGS_MODEL, apiKey: e.REGISTRY_EMBEDDINGS_KEY, dimensions: e.REGISTRY_EMBEDDINGS_DIMENSIONS },
      snapshotDir: path.resolve(e.REGISTRY_INDEX_SNAPSHOT_DIR ?? e.REGISTRY_DATA_DIR),
      snapshotSeconds: e.REGISTRY_INDEX_SNAPSHOT_SECONDS,
      cacheEntries: e.REGISTRY_SEARCH_CACHE_ENTRIES,
      cacheBytes: e.REGISTRY_SEARCH_CACHE_BYTES,
      totalLimit: e.REGISTRY_SEARCH_TOTAL_LIMIT,
    },
    freshness: {
      refreshSeconds: e.REGISTRY_REFRESH_SECONDS,
      probe: e.REGISTRY_PROBE,
      hideUnhealthySeconds: e.REGISTRY_HIDE_UNHEALTHY_SECONDS,
    },
    trust: {
      keysFile: e.REGISTRY_TRUSTED_KEYS === undefined ? undefined : path.resolve(e.REGISTRY_TRUSTED_KEYS),
      jkuUrls: e.REGISTRY_TRUSTED_JKU ?? [],
      jkuRefreshSeconds: e.REGISTRY_TRUSTED_JKU_REFRESH_SECONDS,
      jkuMaxStaleSeconds: e.REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS,
      jkuScope: e.REGISTRY_TRUSTED_JKU_SCOPE,
      requireVerified: e.REGISTRY_REQUIRE_VERIFIED,
      signingKeyFile: e.REGISTRY_SIGNING_KEY === undefined ? undefined : path.resolve(e.REGISTRY_SIGNING_KEY),
      retiredSigningKeysFile: e.REGISTRY_RETIRED_SIGNING_KEYS === undefined ? undefined : path.resolve(e.REGISTRY_RETIRED_SIGNING_KEYS),
    },
    grpc: e.GRPC_PORT === undefined ? undefined : { port: e.GRPC_PORT, publicUrl: e.PUBLIC_GRPC_URL },
    // PUBLIC_URL as taken (its scheme and host in lower case, a default port and final slash dropped), as published.
    given: { ...shownSettings(env, e), ...(e.PUBLIC_URL === undefined ? {} : { PUBLIC_URL: publicUrl }) },
    warnings: [...unknownSettings(env), ...warnings, ...nearAdmin(e.REGISTRY_TOKENS), ...semicolonSeparated(e.REGISTRY_TOKENS), ...plainHttpJku(e.REGISTRY_TRUSTED_JKU ?? []), ...jkuWithoutGrace(e), ...snapshotOutlivesChangeLog(e), ...loopbackPublicUrl(e.PUBLIC_URL, e.HOST)],
  };
}
