/**
 * The operator's trust roots: the only keys a card signature can be verified with.
 *
 * - REGISTRY_TRUSTED_KEYS: a JWKS file. Read at start-up (a file that cannot be read or is no
 *   JWKS stops start-up), then again whenever it changes (the directory is watched, so editors
 *   that replace the file are seen too) and on SIGHUP. A broken edit is logged and the keys in
 *   force stay.
 * - REGISTRY_TRUSTED_JKU: JWKS URLs the operator allow-lists, fetched through the outbound guard
 *   (src/net), kept as long as the answer's Cache-Control max-age or Expires says, within bounds
 *   (at least a minute, at most REGISTRY_TRUSTED_JKU_REFRESH_SECONDS, an hour by default, which
 *   also applies to an answer that says nothing): a publisher that removes a compromised key
 *   decides how soon the registry stops trusting it. Fetched again sooner when a signature
 *   names a kid they lack or one whose key does not verify it (key rotation at the publisher,
 *   with or without a new kid; at most once per minute per URL) and on SIGHUP. A card's own
 *   `jku` is only ever a hint towards one of these: a URL that is not on the list is never
 *   fetched (A2A issue #2096).
 *
 * A JWKS that cannot be fetched is tried again after a minute, then less often, at least every
 * five minutes (a publisher back after an outage is seen within minutes). It keeps the keys it
 * gave last, for at most REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS (a day by default) after that
 * fetch: an outage at the publisher does not unverify every card it vouches for, yet a set
 * deleted or unreachable for good stops being trusted. The last good copy of each set is saved beside the data
 * (`trusted-jwks.json`), so a restart during such an outage starts with those keys too.
 *
 * Listeners hear about every change of the set of keys (`fingerprint`): the registry then
 * re-evaluates the entries it stored.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SettingFileError, parseSettingFileSync, readSettingJson } from '../config/setting-files.js';
import { cacheLifetimeMs } from '../lib/cache-lifetime.js';
import { isObject } from '../lib/json.js';
import { normalHost, parseEndpointUrl } from '../lib/endpoint-url.js';
import type { Fetcher } from '../net/index.js';
import type { Logger } from '../observability/logger.js';
import { outsideScope } from '../observability/request-scope.js';
import type { KeyLookup, TrustedKey, TrustedKeys } from '../validation/signature.js';
import { keysetFingerprint, parseJwks, type ParsedJwks } from './jwks.js';
import { makeDirectories } from '../lib/make-directories.js';
import { shownUrl, withUrlShown } from '../lib/url-password.js';
import { DEFAULT_JKU_MAX_STALE_MS, DEFAULT_JKU_REFRESH_MS } from './setting-defaults.js';

/** A JWKS document as fetched: `lifetimeMs` is how long its server says it may be used, when it says. */
export interface FetchedJwks {
  value: unknown;
  lifetimeMs?: number;
}

/** Fetches a JWKS document through the outbound guard; rejects with a message that says why not. */
export type JwksFetch = (url: string) => Promise<FetchedJwks>;

/** The file, in the data directory, that keeps the last good copy of each allow-listed JWKS. */
export const SAVED_JWKS_FILE = 'trusted-jwks.json';

/** Key sets are small, but larger than a card may be: room for a few dozen RSA keys. */
const MAX_JWKS_BYTES = 64 * 1024;

/** JWKS documents fetched through the one outbound guard (src/net): public addresses only, unless allowed. */
export function guardedJwksFetch(fetcher: Fetcher): JwksFetch {
  return async (url) => {
    const doc = await fetcher.getJson(url, { purpose: 'jwks', maxBytes: MAX_JWKS_BYTES, headers: { accept: 'application/jwk-set+json, application/json' } });
    if (doc.notModified) throw new Error(`${url} answered 304 to an unconditional request`);
    return { value: doc.value, lifetimeMs: doc.caching ? cacheLifetimeMs(doc.caching) : undefined };
  };
}

export interface TrustRootsOptions {
  /** Path of the trusted JWKS file (REGISTRY_TRUSTED_KEYS). */
  keysFile?: string;
  /** Allow-listed JWKS URLs (REGISTRY_TRUSTED_JKU). */
  jkuUrls?: readonly string[];
  /** Needed when jkuUrls is not empty. */
  fetchJwks?: JwksFetch;
  log: Logger;
  /**
   * The longest a fetched JWKS is used before it is fetched again, and how long when its answer
   * gives no lifetime (REGISTRY_TRUSTED_JKU_REFRESH_SECONDS; default one hour).
   */
  jkuRefreshMs?: number;
  /**
   * The least time between two scheduled fetches of one JWKS, however short its answer's
   * lifetime (`no-cache`, `max-age=0`), so a publisher cannot make the registry poll it
   * (default one minute, or jkuRefreshMs when that is shorter).
   */
  jkuMinRefreshMs?: number;
  /** Least time between two fetches of one JWKS prompted by an unknown kid (default one minute). */
  jkuRetryMs?: number;
  /**
   * The longest wait between two scheduled fetches of a JWKS that cannot be fetched (default
   * five minutes, or jkuRefreshMs when that is shorter): the retries back off from
   * jkuMinRefreshMs up to this, not up to jkuRefreshMs, so a publisher back after an outage is
   * seen within minutes, not an hour later (under REGISTRY_REQUIRE_VERIFIED the registry is
   * not ready until some trust root gives a key).
   */
  jkuMaxRetryMs?: number;
  /**
   * `site`: a key from an allow-listed JWKS verifies only cards whose every endpoint is on the
   * JWKS URL's host or under it (REGISTRY_TRUSTED_JKU_SCOPE); `any` (default): every card.
   * Keys of the keys file, the operator's own, are never scoped.
   */
  jkuScope?: 'any' | 'site';
  /**
   * How long the keys of a JWKS that cannot be fetched stay trusted after its last successful
   * fetch (REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS; default one day).
   */
  jkuMaxStaleMs?: number;
  /**
   * Where the last good copy of each allow-listed JWKS is saved, to start with while its server
   * cannot be reached (within jkuMaxStaleMs of that copy's fetch). None: nothing is saved.
   */
  savedJwksFile?: string;
  /** Reload on SIGHUP (default true). */
  sighup?: boolean;
  /** Reload when the keys file changes (default true). */
  watch?: boolean;
}

interface JkuSet {
  url: string;
  /**
   * The URL as every log line, message and verified signature names it: its query values masked
   * (a key server's ?token=... is the operator's secret, and signatures' key sets are shown with
   * entries to anyone).
   */
  shown: string;
  keys: TrustedKey[];
  /** The document the keys come from, and when it was fetched (undefined: never, nor saved). */
  document?: unknown;
  goodAt?: number;
  /**
   * The last fetch, good or not (the rate limit of fetches prompted by signatures), on the
   * monotonic clock (performance.now()): on the wall clock, a step back (NTP) made every set look
   * fetched in the future, and a card signed with a key its publisher had just added stayed
   * unverified until the clock caught up.
   */
  fetchedAt: number;
  error?: string;
  /** Fetches failed in a row: the next scheduled one waits longer each time. */
  failures: number;
  inFlight?: Promise<void>;
  /** The next scheduled fetch. */
  timer?: NodeJS.Timeout;
}

const DEFAULT_JKU_MIN_REFRESH_MS = 60_000;
const DEFAULT_JKU_RETRY_MS = 60_000;
const DEFAULT_JKU_MAX_RETRY_MS = 5 * 60_000;
/** Editors write a file in several steps: wait for the burst to end. */
const WATCH_SETTLE_MS = 50;

/** The form allow-listed and requested JWKS URLs are compared in. */
function jkuKey(url: string): string {
  const parsed = parseEndpointUrl(url);
  return parsed.ok ? parsed.normalized : url;
}

/** The host a JWKS URL's keys vouch for under REGISTRY_TRUSTED_JKU_SCOPE=site (in the normal form card endpoints are compared in). */
function siteOf(url: string): string | undefined {
  const parsed = parseEndpointUrl(url);
  return parsed.ok ? normalHost(parsed.url) : undefined;
}

/**
 * The keys of the keys file (REGISTRY_TRUSTED_KEYS), and why any were left out; a SettingFileError
 * when it cannot be read or is no JWKS. Also what a start checks before the registry's modules
 * load (composition/start-checks.ts).
 */
export function readTrustedKeysFile(file: string): ParsedJwks {
  const value = readSettingJson('REGISTRY_TRUSTED_KEYS', file);
  return parseSettingFileSync('REGISTRY_TRUSTED_KEYS', file, () => parseJwks(value, file));
}

export class TrustRoots implements TrustedKeys {
  readonly #options: TrustRootsOptions;
  readonly #log: Logger;
  #fileKeys: TrustedKey[] = [];
  /** Why keys of the file were left out, at its last good read. */
  #fileProblems: string[] = [];
  readonly #jku = new Map<string, JkuSet>();
  #fingerprint = '';
  readonly #listeners = new Set<() => void>();
  #watcher: fs.FSWatcher | undefined;
  #settle: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #onSighup = (): void => {
    this.#log.info('SIGHUP: reloading the trust roots');
    void this.reload();
  };

  private constructor(options: TrustRootsOptions) {
    this.#options = options;
    this.#log = options.log;
    for (const url of options.jkuUrls ?? []) this.#jku.set(jkuKey(url), { url, shown: shownUrl(url, 'an allow-listed JWKS URL'), keys: [], fetchedAt: -Infinity, failures: 0 });
  }

  /** Loads the trust roots; throws when the keys file cannot be used (the operator must fix it). */
  static async open(options: TrustRootsOptions): Promise<TrustRoots> {
    if ((options.jkuUrls?.length ?? 0) > 0 && !options.fetchJwks) throw new Error('REGISTRY_TRUSTED_JKU needs the outbound fetcher.');
    const roots = new TrustRoots(options);
    if (options.keysFile) [roots.#fileKeys, roots.#fileProblems] = roots.#readKeysFile(options.keysFile);
    roots.#adoptSavedCopies();
    await Promise.all([...roots.#jku.values()].map((set) => roots.#fetch(set)));
    roots.#fingerprint = await keysetFingerprint(roots.#allKeys());
    roots.#warnSharedKids();
    if (options.watch !== false) roots.#watch();
    if (options.sighup !== false) process.on('SIGHUP', roots.#onSighup);
    return roots;
  }

  get configured(): boolean {
    return this.#options.keysFile !== undefined || this.#jku.size > 0;
  }

  get fingerprint(): string {
    return this.#fingerprint;
  }

  /** How many keys are trusted now (for logs). */
  get size(): number {
    return this.#allKeys().length;
  }

  /** Why keys of the keys file were left out (its last good read), one line each: what an empty set of file keys is told with. */
  get fileProblems(): readonly string[] {
    return this.#fileProblems;
  }

  /** Calls `listener` after every change of the trusted keys; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async lookup(kid: string, jku: string | undefined): Promise<KeyLookup> {
    let keys = this.#resolve(kid, jku);
    // What anyone may read (validate is open to all, stored verdicts are shown with entries), and
    // the same with the allow-listed URLs and fetch errors, for the operator and authenticated
    // callers only: those would tell anyone the operator's key servers and its network.
    const notes: string[] = [];
    const details: string[] = [];
    const named = jku === undefined ? undefined : this.#jku.get(jkuKey(jku));
    if (jku !== undefined && !named) {
      // The caller's own jku: telling them it is not on the list reveals nothing of the list.
      const note = `its jku ${JSON.stringify(jku)} is not one of the registry's trusted JWKS URLs (REGISTRY_TRUSTED_JKU), so it was not fetched`;
      notes.push(note);
      details.push(note);
    }
    if (keys.length === 0 && this.#jku.size > 0) {
      // The publisher may have rotated keys since the last fetch: look again (rate-limited),
      // at the set the signature names if it is allow-listed, else at every allow-listed set.
      const sets = named ? [named] : [...this.#jku.values()];
      if (await this.#fetchStale(sets)) keys = this.#resolve(kid, jku);
      const failed = sets.filter((s) => s.error);
      if (failed.length > 0) {
        notes.push(
          `${failed.length === 1 ? 'a trusted JWKS' : `${failed.length} trusted JWKS`} that may hold it could not be fetched just now; the registry's operator can see which, and why, in its log`,
        );
        for (const s of failed) details.push(`the JWKS at ${s.shown} could not be fetched (${s.error})`);
      }
    }
    const out: KeyLookup = { keys };
    if (notes.length > 0) out.note = notes.join('; ');
    if (details.join('; ') !== (out.note ?? '')) out.noteDetail = details.join('; ');
    return out;
  }

  /**
   * The trusted keys a signature naming `kid` (and `jku`) may be by. Each trust root chooses its
   * own kids, so one allow-listed publisher may publish a key under the kid of a key trusted for
   * someone else. The operator's file decides a kid it holds (another set's key under it verifies
   * nothing); a signature whose jku names an allow-listed set holding the kid is by that set's
   * key; else every allow-listed set holding the kid offers its keys. A signature verifies with
   * one key only, so the key that verifies it says whose it is, and its status names that key's
   * set (SignatureStatus.jwks): a publisher that adds another's kid to its set neither unverifies
   * the other's cards nor has its own listed as the other's.
   */
  #resolve(kid: string, jku: string | undefined): TrustedKey[] {
    const file = this.#fileKeys.filter((k) => k.kid === kid);
    if (file.length > 0) return file;
    const named = jku === undefined ? undefined : this.#jku.get(jkuKey(jku));
    const holders = [...this.#jku.values()].filter((s) => s.keys.some((k) => k.kid === kid));
    const chosen = named && holders.includes(named) ? [named] : holders;
    return chosen.flatMap((s) => s.keys.filter((k) => k.kid === kid));
  }

  /**
   * The keys for `kid` once more, after none of those `lookup` gave verified a signature: a
   * publisher may have replaced the key behind a kid in its JWKS (rotation without a new kid),
   * and waiting for the hourly fetch would refuse its newly signed cards as tampered meanwhile.
   * The allow-listed sets holding the kid (or the one the signature's jku names) are fetched
   * again, at most once a minute each, as for an unknown kid; undefined when none was.
   */
  async lookupAgain(kid: string, jku: string | undefined): Promise<KeyLookup | undefined> {
    const named = jku === undefined ? undefined : this.#jku.get(jkuKey(jku));
    const sets = named ? [named] : [...this.#jku.values()].filter((s) => s.keys.some((k) => k.kid === kid));
    if (!(await this.#fetchStale(sets))) return undefined;
    return { keys: this.#resolve(kid, jku) };
  }

  /** Reads the keys file and fetches every allow-listed JWKS again (SIGHUP does this). */
  async reload(): Promise<void> {
    if (this.#closed) return;
    this.#reloadFile();
    await Promise.all([...this.#jku.values()].map((set) => this.#fetch(set)));
    await this.#recompute();
  }

  close(): void {
    this.#closed = true;
    process.removeListener('SIGHUP', this.#onSighup);
    this.#watcher?.close();
    clearTimeout(this.#settle);
    for (const set of this.#jku.values()) clearTimeout(set.timer);
  }

  #allKeys(): TrustedKey[] {
    return [...this.#fileKeys, ...[...this.#jku.values()].flatMap((s) => s.keys)];
  }

  /** Tells the operator about kids several trust roots hold (#resolve decides them). */
  #warnSharedKids(): void {
    const sources = new Map<string, Set<string>>();
    for (const k of this.#allKeys()) sources.set(k.kid, (sources.get(k.kid) ?? new Set()).add(k.source));
    for (const [kid, from] of sources) {
      if (from.size < 2) continue;
      this.#log.warn(
        { kid, sources: [...from] },
        `kid ${JSON.stringify(kid)} is held by several trust roots (${[...from].join(', ')}): the keys file decides it, else the key that verifies a signature (or the JWKS its jku names), and a verified signature names the JWKS of its key`,
      );
    }
  }

  #readKeysFile(file: string): [TrustedKey[], string[]] {
    const parsed = readTrustedKeysFile(file);
    for (const problem of parsed.problems) this.#log.warn({ file }, problem);
    return [parsed.keys, parsed.problems];
  }

  #reloadFile(): void {
    const file = this.#options.keysFile;
    if (!file || this.#closed) return;
    try {
      [this.#fileKeys, this.#fileProblems] = this.#readKeysFile(file);
    } catch (error) {
      const why = error instanceof SettingFileError ? error.problem : (error as Error).message;
      this.#log.error({ file, err: error }, `the trusted keys were not reloaded, the previous ones stay in force: ${why}`);
    }
  }

  async #fetch(set: JkuSet): Promise<void> {
    set.inFlight ??= (async () => {
      try {
        const fetched = await this.#options.fetchJwks!(set.url);
        this.#adopt(set, fetched.value, Date.now(), true);
        set.error = undefined;
        set.failures = 0;
        this.#save();
        this.#schedule(set, fetched.lifetimeMs);
      } catch (error) {
        // The keys fetched last stay in force for a while: a JWKS endpoint that is down must not
        // unverify every card it vouches for. It is asked again soon, then less often while it
        // stays down (at most every jkuMaxRetryMs); past the longest it may be used, its keys are
        // no longer trusted.
        // The guard's messages name the URL fetched in full: shown as the set is.
        set.error = withUrlShown((error as Error).message, set.url, set.shown);
        set.failures++;
        const staleIn = set.keys.length > 0 && set.goodAt !== undefined ? set.goodAt + this.#maxStaleMs - Date.now() : Infinity;
        const kept = Number.isFinite(staleIn) && staleIn > 0 ? `: the keys it gave at ${new Date(set.goodAt!).toISOString()} stay trusted until ${new Date(set.goodAt! + this.#maxStaleMs).toISOString()} (REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS)` : '';
        this.#log.warn({ url: set.shown, failure: set.error }, `the trusted JWKS at ${set.shown} could not be fetched${kept}`);
        if (staleIn <= 0) {
          set.keys = [];
          this.#log.error(
            { url: set.shown, fetchedAt: new Date(set.goodAt!).toISOString() },
            `the keys of the trusted JWKS at ${set.shown} are no longer trusted: it has not been fetched since ${new Date(set.goodAt!).toISOString()}, longer ago than REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS allows`,
          );
        }
        const backoff = Math.min(this.#minRefreshMs * 2 ** Math.min(set.failures - 1, 20), this.#maxRetryMs);
        this.#schedule(set, Math.min(backoff, Math.max(staleIn, 0)));
      } finally {
        set.fetchedAt = performance.now();
        set.inFlight = undefined;
      }
    })();
    return set.inFlight;
  }

  /** The keys of `document` (a JWKS fetched or saved at `goodAt`) become the set's. */
  #adopt(set: JkuSet, document: unknown, goodAt: number, warn: boolean): void {
    const parsed = parseJwks(document, set.shown);
    if (warn) for (const problem of parsed.problems) this.#log.warn({ url: set.shown }, problem);
    const scope = this.#options.jkuScope === 'site' ? siteOf(set.url) : undefined;
    // Each key knows its set, which a signature it verifies is said to be by (SignatureStatus.jwks).
    set.keys = parsed.keys.map((k) => (scope === undefined ? { ...k, jwks: set.shown } : { ...k, jwks: set.shown, vouchesFor: scope }));
    set.document = document;
    set.goodAt = goodAt;
  }

  /**
   * Start-up: each allow-listed set's saved copy, when it is recent enough, until the fetch that
   * follows replaces it (or fails, and the copy stays in force). A copy that cannot be read is
   * ignored, saying so: the sets are fetched anyway.
   */
  #adoptSavedCopies(): void {
    const file = this.#options.savedJwksFile;
    if (!file || this.#jku.size === 0) return;
    let saved: unknown;
    try {
      saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.#log.warn({ file, err: error }, `the saved copies of the trusted JWKS in ${file} cannot be read; the sets are fetched anew`);
      return;
    }
    if (!isObject(saved)) return;
    for (const set of this.#jku.values()) {
      const copy = saved[set.url];
      if (!isObject(copy) || typeof copy.fetchedAt !== 'number' || Date.now() - copy.fetchedAt >= this.#maxStaleMs) continue;
      try {
        this.#adopt(set, copy.document, copy.fetchedAt, false);
      } catch {
        // Not a key set (an edited file): the fetch decides.
      }
    }
  }

  /** Saves the last good copy of every set (written whole, then renamed: never half a file). */
  #save(): void {
    const file = this.#options.savedJwksFile;
    if (!file || this.#closed) return;
    const copies: Record<string, { fetchedAt: number; document: unknown }> = {};
    for (const set of this.#jku.values()) if (set.goodAt !== undefined && set.keys.length > 0) copies[set.url] = { fetchedAt: set.goodAt, document: set.document };
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      makeDirectories(path.dirname(file), 0o700);
      fs.writeFileSync(temporary, JSON.stringify(copies), { mode: 0o600 });
      fs.renameSync(temporary, file);
    } catch (error) {
      fs.rmSync(temporary, { force: true });
      this.#log.warn({ file, err: error }, `the trusted JWKS could not be saved to ${file}; a restart while a set cannot be fetched starts without its keys`);
    }
  }

  /** Fetches again the sets last fetched longer ago than the retry interval; true when any was. */
  async #fetchStale(sets: readonly JkuSet[]): Promise<boolean> {
    const retry = this.#options.jkuRetryMs ?? DEFAULT_JKU_RETRY_MS;
    const stale = sets.filter((s) => performance.now() - s.fetchedAt >= retry);
    if (stale.length === 0) return false;
    await Promise.all(stale.map((s) => this.#fetch(s)));
    await this.#recompute();
    return true;
  }

  get #maxRefreshMs(): number {
    return this.#options.jkuRefreshMs ?? DEFAULT_JKU_REFRESH_MS;
  }

  get #maxStaleMs(): number {
    return this.#options.jkuMaxStaleMs ?? DEFAULT_JKU_MAX_STALE_MS;
  }

  get #minRefreshMs(): number {
    return Math.min(this.#options.jkuMinRefreshMs ?? DEFAULT_JKU_MIN_REFRESH_MS, this.#maxRefreshMs);
  }

  get #maxRetryMs(): number {
    return Math.max(this.#minRefreshMs, Math.min(this.#options.jkuMaxRetryMs ?? DEFAULT_JKU_MAX_RETRY_MS, this.#maxRefreshMs));
  }

  /**
   * The next fetch of `set`, after the lifetime its answer gave (within the bounds), or the
   * longest when it gave none. A key gone from the set then changes the fingerprint, and the
   * listeners re-evaluate the cards it verified.
   */
  #schedule(set: JkuSet, lifetimeMs: number | undefined): void {
    clearTimeout(set.timer);
    if (this.#closed) return;
    const delay = Math.min(this.#maxRefreshMs, Math.max(this.#minRefreshMs, lifetimeMs ?? this.#maxRefreshMs));
    // Made outside any request's scope: a fetch a request asked for (a kid the sets lacked)
    // schedules the next one, and a timer keeps the async context it was made in, so the request
    // (its scope, request and response) stayed in memory until the refresh, an hour by default,
    // and every later refresh logged under that request's id.
    set.timer = outsideScope(() => setTimeout(() => void this.#fetch(set).then(() => this.#recompute()), delay).unref());
  }

  async #recompute(): Promise<void> {
    if (this.#closed) return;
    const fingerprint = await keysetFingerprint(this.#allKeys());
    if (fingerprint === this.#fingerprint) return;
    this.#fingerprint = fingerprint;
    this.#log.info({ keys: this.size, fingerprint }, 'the trusted keys changed');
    this.#warnSharedKids();
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch (error) {
        this.#log.error({ err: error }, 'a trust-root listener failed');
      }
    }
  }

  #watch(): void {
    const file = this.#options.keysFile;
    if (!file) return;
    const base = path.basename(file);
    try {
      // The directory, not the file: an editor or `mv` that replaces the file would end a watch
      // on the file itself.
      this.#watcher = fs.watch(path.dirname(file), (_event, name) => {
        if (name !== null && name !== base) return;
        clearTimeout(this.#settle);
        this.#settle = setTimeout(() => {
          this.#reloadFile();
          void this.#recompute();
        }, WATCH_SETTLE_MS);
      });
      this.#watcher.on('error', (error) => this.#log.warn({ err: error, file }, 'watching the trusted keys file failed; send SIGHUP after changing it'));
      this.#watcher.unref();
    } catch (error) {
      this.#log.warn({ err: error, file }, 'cannot watch the trusted keys file; send SIGHUP after changing it');
    }
  }
}
