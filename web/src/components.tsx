/** Small pieces every page uses. */
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { promptTokenRefused, RegistryError, TokenNeeded, type EntryStatus } from './api';
import { config } from './config';
import { ANSWER_DEADLINE_MS } from './deadline';
import { Foreign } from './foreign';
import { retryAfterSeconds } from './rate-wait';
import { saveToken, savedToken } from './token';

/**
 * Only http(s) links from documents become links: a card may carry any string (javascript:, data:).
 * Nor does one with a user name or password: "https://trusted.com@evil.net" reads as trusted.com
 * and leads to evil.net (the registry warns about it, rule credentials-url), shown as text instead.
 */
export function safeUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    if (url.username !== '' || url.password !== '') return undefined;
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A link to somewhere a registered document points: never given our referrer or window. It opens
 * in a new tab, and says so to screen readers (WCAG technique G201): a tab opened unannounced
 * leaves them with a Back that does nothing.
 */
export function ExternalLink({ url, children }: { url: unknown; children?: ComponentChildren }) {
  const safe = safeUrl(url);
  if (!safe) return <span class="mono">{typeof url === 'string' ? url : String(url ?? '')}</span>;
  return (
    <a href={safe} rel="noopener noreferrer nofollow ugc" target="_blank">
      {children ?? safe}
      <span class="visually-hidden"> (opens in a new tab)</span>
    </a>
  );
}

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API (plain http) or no permission: the old way, through a selection.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}

/** Copies `text`; says so in a live region, so screen readers hear it too. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState<'' | 'copied' | 'failed'>('');
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  return (
    <span class="copy">
      <button
        type="button"
        class="small"
        aria-label={label}
        onClick={async () => {
          setDone((await copyText(text)) ? 'copied' : 'failed');
          window.clearTimeout(timer.current);
          timer.current = window.setTimeout(() => setDone(''), 2000);
        }}
      >
        Copy
      </button>
      <span class="copy-status" role="status">
        {done === 'copied' ? 'Copied' : done === 'failed' ? 'Copy failed: select the text instead' : ''}
      </span>
    </span>
  );
}

export const KIND_LABEL = { agent: 'Agent', 'mcp-server': 'MCP server' } as const;

/** SignatureStatus.jwks of a signature verified by one of the operator's own keys (REGISTRY_TRUSTED_KEYS). */
export const OWN_KEY_SET = 'registry';

/** Where the key that verified a signature comes from, for people: a kid is unique within one key set only. */
export function keySetText(jwks: string): string {
  return jwks === OWN_KEY_SET ? "the registry operator's own keys" : `the key set at ${jwks}`;
}

/**
 * Words a badge's tooltip adds, said to assistive technology too: a `title` shows on hover only
 * (never to keyboard or touch users) and screen readers often skip it. Beside the badge, not in
 * it, so that the badge itself still reads as one word.
 */
function BadgeDetail({ text }: { text: string | undefined }) {
  return text ? <span class="visually-hidden"> ({text})</span> : null;
}

const DRIFT_DETAIL = 'The live document differs from this registered revision';
const HEALTH_BADGE = { ok: 'Reachable', unreachable: 'Unreachable', invalid: 'Invalid live card' } as const;

/**
 * Verified and health, shown when the registry reports them (trust and freshness features).
 * `current`: the entry's current revision, when an older one is shown. Verified is that revision's
 * own (its signatures judged now), but health and drift are the entry's now (drift compares the
 * live document with the current revision): labelled so, not read as the older revision's.
 */
export function StatusBadges({ status, current }: { status: EntryStatus; current?: number }) {
  const key = status.kid ? `Signature verified with key ${status.kid}${status.jwks ? ` of ${keySetText(status.jwks)}` : ''}` : 'Signature verified with a trusted key';
  const checked = status.health?.checkedAt ? `Checked ${formatDate(status.health.checkedAt)}` : undefined;
  const health = status.health && (HEALTH_BADGE[status.health.status as keyof typeof HEALTH_BADGE] ?? status.health.status);
  const drift = current === undefined ? DRIFT_DETAIL : `The live document differs from the current revision, ${current}`;
  return (
    <>
      {status.verified === true && (
        <>
          <span class="badge ok" title={key}>
            Verified
          </span>
          <BadgeDetail text={key} />
        </>
      )}
      {status.health && (
        <>
          <span class={`badge ${status.health.status === 'ok' ? 'ok' : 'warn'}`} title={checked}>
            {current === undefined ? health : `${health} now`}
          </span>
          <BadgeDetail text={checked} />
        </>
      )}
      {status.drift === true && (
        <>
          <span class="badge warn" title={drift}>
            {current === undefined ? 'Changed live' : `Live differs from revision ${current}`}
          </span>
          <BadgeDetail text={drift} />
        </>
      )}
    </>
  );
}

export function formatDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** Failures that asking again may mend: no answer, a gateway's error, a rate limit. A refusal of the request itself would only be repeated. */
const TRANSIENT = /^(NETWORK|TIMEOUT|FAILED|RATE_LIMITED|STORAGE_UNAVAILABLE|STARTING_UP|UNAVAILABLE|INTERNAL|HTTP_5\d\d)$/;

/** A failure that asking again may mend (see TRANSIENT): what was shown before it may stay on screen beside it. */
export const mayMendByAsking = (error: unknown) => error instanceof RegistryError && TRANSIENT.test(error.code);

/**
 * The registry's refusal, in its own words: message, then each detail with its path and hint.
 * With `onRetry`, a failure that asking again may mend offers a button that does. `children`:
 * what the page adds (where to type a token, what a lost answer means), said with the refusal:
 * the notice is a live region of its own, so no live region need be put around it (nested, a
 * screen reader says the refusal twice).
 */
export function ErrorNotice({ error, title, id, onRetry, children }: { error: unknown; title?: string; id?: string; onRetry?: () => void; children?: ComponentChildren }) {
  const err = error instanceof RegistryError ? error : new RegistryError('ERROR', error instanceof Error ? error.message : String(error));
  // Told to wait (a rate limit): asking sooner is only refused again, so the button waits too.
  const [waiting, setWaiting] = useState(waitLeft(err) > 0);
  useEffect(() => {
    setWaiting(waitLeft(err) > 0);
    if (waitLeft(err) <= 0) return;
    const timer = window.setTimeout(() => setWaiting(false), waitLeft(err));
    return () => window.clearTimeout(timer);
  }, [error]);
  // A wait is counted down beside the message unless the message says it in words of its own
  // ("…; retry in 2 seconds (GET /readyz …)", "retry shortly"), so that it is said once.
  const counted = err.notBefore !== undefined && (withoutWait(err.message) !== err.message || !/\b(retry|try again)\b/i.test(err.message));
  // A registry closed to anonymous reads, first visited: its way in, said plainly above the token
  // field, not as an alert that the search or the entry failed (nothing was asked).
  if (error instanceof TokenNeeded) {
    return (
      <div class="notice" id={id}>
        <p>{error.message}</p>
      </div>
    );
  }
  // The refusal is the alert, said once as it comes: its wait too, as it was then. The wait's end
  // is said politely by a status beside the alert, not in it: a live region inside another is
  // said twice, and a change inside the alert (atomic) would say the whole refusal again.
  return (
    <div class="notice error">
      {/* `id`: what a field's aria-describedby names, the refusal (not the status of its wait). */}
      <div role="alert" id={id}>
        <p>
          <strong>{title ?? 'The registry declined the request'}</strong>{' '}
          <span class="code">
            <Foreign text={err.code} />
          </span>
        </p>
        {/* The registry's words, which quote what was asked (an id from a link): isolated. */}
        <p>
          <Foreign text={counted ? withoutWait(err.message) : err.message} />
        </p>
        {/* Counted down on screen (the registry's message said it once, as it was when refused). */}
        {counted && waiting && (
          <p>
            Try again in <Countdown until={err.notBefore} />.
          </p>
        )}
        {err.details.length > 0 && (
          <ul>
            {err.details.map((d) => (
              <li>
                <code>
                  <Foreign text={d.path || '/'} />
                </code>{' '}
                <Foreign text={d.message} />
                {d.hint && (
                  <span class="hint">
                    {' — '}
                    <Foreign text={d.hint} />
                  </span>
                )}
              </li>
            ))}
          </ul>
        )}
        {children}
        {onRetry && mayMendByAsking(err) && (
          <p>
            <button type="button" onClick={onRetry} disabled={waiting}>
              Try again
            </button>
          </p>
        )}
      </div>
      {counted && <p role="status">{waiting ? '' : 'The wait is over: the registry takes requests again.'}</p>}
    </div>
  );
}

/** A message without the sentence of the wait it ends with ("… per minute. Retry after 30 s."): the page counts that wait down beside it. */
const withoutWait = (message: string) => message.replace(/([.!?])\s+(?:Retry after|Try again in) \d+ s\.\s*$/, '$1');

/** Seconds left until `until` (a Date.now() time), drawn again as each second passes; 0 once it has. */
function useSecondsLeft(until: number): number {
  const left = Math.max(0, until - Date.now());
  const [, tick] = useState(0);
  useEffect(() => {
    if (left <= 0) return;
    // At the next whole second of the wait, so the number steps as a clock does.
    const timer = window.setTimeout(() => tick((n) => n + 1), left % 1000 || 1000);
    return () => window.clearTimeout(timer);
  });
  return Math.ceil(left / 1000);
}

/**
 * The seconds left of a wait ("28 s"), counting down on screen. A screen reader is told the
 * seconds once, as they were when the wait was first said, not every second (the counting
 * number is hidden from it); the end of the wait is said by what follows it (the search asked,
 * "The wait is over").
 */
export function Countdown({ until }: { until: number }) {
  const left = useSecondsLeft(until);
  // Recounted for another wait only (a later refusal's): ticks do not change it.
  const said = useMemo(() => left, [until]);
  return (
    <>
      <span aria-hidden="true">{left} s</span>
      <span class="visually-hidden">{said} s</span>
    </>
  );
}

/** Milliseconds before asking again may be answered (a rate limit's Retry-After, counted from the refusal); 0 when it may be now. */
export const waitLeft = (error: unknown) => (error instanceof RegistryError && error.notBefore !== undefined ? Math.max(0, error.notBefore - Date.now()) : 0);

/** Sets the tab title and moves focus to the page's heading when the page changes (keyboard and screen reader users land on it). */
export function usePageHeading(title: string, moved: number) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = title;
  }, [title]);
  useEffect(() => {
    if (moved > 0) ref.current?.focus();
  }, [moved]);
  return ref;
}

export const needsToken = (error: unknown) => error instanceof RegistryError && error.code === 'UNAUTHENTICATED';

/** A view's code that has not arrived by the deadline (a proxy holding it): an import cannot be cancelled. */
class CodeLate extends Error {}

/**
 * Loads a page's code when it is first shown (the search page stays small): the module, `false`
 * while it loads, or the failure. It fails when the registry cannot be reached, or was updated
 * since this page was opened (the old build's file names are gone); the browser keeps a failed
 * import failed, so only a reload of the page loads it.
 */
export function useModule<T>(load: () => Promise<T>): T | false | Error {
  const [mod, setMod] = useState<T | false | Error>(false);
  useEffect(() => {
    let live = true;
    // One that has not arrived by the deadline is told as failed, rather than "Loading…" for ever.
    const timer = window.setTimeout(() => live && setMod(new CodeLate('The page code did not arrive in time.')), ANSWER_DEADLINE_MS);
    load().then(
      (m) => live && setMod(() => m),
      (err: unknown) => live && setMod(err instanceof Error ? err : new Error(String(err))),
    ).finally(() => window.clearTimeout(timer));
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, []);
  return mod;
}

/** How long the page waits to learn why its code was refused (whyCodeFailed). */
const REFUSAL_CHECK_MS = 3000;

/**
 * Why a view's code did not load, as far as the page can learn it: refused by the address's
 * request limit (until when); or `said`, the cause to tell: the registry not reached; not
 * arrived (a file the browser named, or a code late past the deadline: not reached, or the
 * registry updated since this page was opened); or unexplained (Safari's failure, "Importing a
 * module script failed.", names no file nor why, and the registry answers).
 */
type CodeFailure = { refusedUntil: number } | { said: 'unreachable' | 'not-arrived' | 'unexplained' };

/**
 * Asks once more for the file named in the import's failure ("Failed to fetch dynamically
 * imported module: https://…/assets/x.js"), or, when the failure names none (Safari), for the
 * page's own script, for its status and Retry-After, which the failed import does not tell: the
 * address's request limit (HTTP 429) counts the page's files too, so a refusal of either is the
 * limit; no answer at all is the registry not reached.
 */
async function whyCodeFailed(failure: Error): Promise<CodeFailure> {
  // Not arrived in time: a proxy holding it, which asking again would only wait for.
  if (failure instanceof CodeLate) return { said: 'not-arrived' };
  const named = /\bhttps?:\/\/\S+\.js\b/.exec(failure.message)?.[0];
  const file = named ?? document.querySelector<HTMLScriptElement>('script[type=module][src]')?.src;
  const otherwise = { said: named === undefined ? 'unexplained' : 'not-arrived' } as const;
  if (!file || new URL(file).origin !== window.location.origin) return otherwise;
  try {
    // Not for long: the notice says nothing until this answers (a proxy holding it would leave it blank).
    const res = await fetch(file, { cache: 'no-store', credentials: 'omit', signal: AbortSignal.timeout(REFUSAL_CHECK_MS) });
    if (res.status !== 429) return otherwise;
    // Both forms of the header, bounded as every wait the page holds (a day's Retry-After counted down a day).
    const retry = retryAfterSeconds(res.headers.get('retry-after'));
    return { refusedUntil: Date.now() + (retry !== undefined && retry > 0 ? retry : 60) * 1000 };
  } catch {
    return { said: 'unreachable' };
  }
}

/** What the alert says of a view's code that did not load, but for the request limit's refusal (said with its countdown). */
const CODE_FAILURE_SAID: Record<Extract<CodeFailure, { said: string }>['said'], string> = {
  unreachable: 'Its code did not arrive: the registry cannot be reached. Check your connection, then reload the page.',
  'not-arrived': 'Its code did not arrive: the registry cannot be reached, or it was updated since this page was opened. Check your connection, then reload the page.',
  // The browser said neither which file nor why (Safari), and the registry answers: a reload is
  // the way out (it was updated since this page was opened); failing again, its files are amiss.
  unexplained:
    "Its code did not load, and this browser does not say which file failed or why. Reload the page; if it still fails, tell the registry's operator: the page's files on the registry (its web bundle, made by npm run build) may be missing, incomplete or broken.",
};

/** A page whose code could not be loaded (see useModule): said so, with the way out, instead of "Loading…" for ever. */
export function ModuleFailed({ moved, failure }: { moved: number; failure: Error }) {
  const heading = usePageHeading(`Page not loaded · ${config.name}`, moved);
  // null while the file is asked about: the alert says why once, not the connection's first and the limit's then.
  const [why, setWhy] = useState<CodeFailure | null>(null);
  useEffect(() => {
    let live = true;
    void whyCodeFailed(failure).then((found) => live && setWhy(found));
    return () => {
      live = false;
    };
  }, [failure]);
  return (
    <section>
      <h1 ref={heading} tabIndex={-1}>
        This page could not be loaded
      </h1>
      <div class="notice error" role="alert">
        {why === null ? null : 'refusedUntil' in why ? (
          <p>
            Its code was refused: too many requests from this address. The registry limits how many requests one address sends a minute, and pages and their files,
            searches, entries, checks and registrations count together. Reload the page in <Countdown until={why.refusedUntil} />.
          </p>
        ) : (
          <p>{CODE_FAILURE_SAID[why.said]}</p>
        )}
      </div>
      <p>
        <button type="button" onClick={() => window.location.reload()}>
          Reload the page
        </button>
      </p>
    </section>
  );
}

/** A read that may be asked again: with a token typed in a TokenPrompt, or with "Try again". */
export interface Retry {
  /** Counts the askings: a dependency of the effect that reads, so each asking reads again. */
  attempt: number;
  /**
   * Ask again as before ("Try again"). `focus`: where the focus waits meanwhile, when the
   * control that asked goes away with the failure (a notice's button): not lost to the page's top.
   * `failure`: the failure shown; one that names a wait (a rate limit) is asked again once it is over.
   */
  again(focus?: HTMLElement | null, failure?: unknown): void;
  /** Asked again, waiting for the registry's Retry-After: when it is asked (Date.now() time), else undefined. */
  waitingUntil: number | undefined;
  /** The read now shown was asked again with a token typed in the prompt: on success, the focus goes to what it read. */
  withTypedToken: boolean;
  /** For the TokenPrompt: a token saved reads again; refused too, the prompt takes the focus back. */
  prompt: { focus: boolean; onSaved(): void };
  /** The read's failure as the person is told it: a refusal of the token just typed in the prompt is said as that. */
  said(error: unknown): unknown;
}

/**
 * The state of a read asked again (the search, an entry, a comparison), one for each page that
 * reads. `key` names what is read (the search's URL, the revision): an asking belongs to it,
 * so a token typed for one read does not move the focus when another is shown.
 */
export function useRetry(key: string): Retry {
  const [attempt, setAttempt] = useState(0);
  // The key and attempt of the read asked with a typed token.
  const [typed, setTyped] = useState('');
  const withTypedToken = typed === `${key}#${attempt}`;
  // An asking that waits for the registry's Retry-After: for this key, when it is asked (Date.now() time).
  const [queued, setQueued] = useState<{ key: string; until: number }>();
  const waiting = queued?.key === key ? queued.until : undefined;
  useEffect(() => {
    // Another read shown meanwhile (other words, Back): the asking queued for this one is dropped,
    // not left to fire if the person comes back to it.
    if (queued !== undefined && queued.key !== key) setQueued(undefined);
    if (waiting === undefined) return;
    const timer = window.setTimeout(() => {
      setQueued(undefined);
      setAttempt((n) => n + 1);
    }, waiting - Date.now());
    return () => window.clearTimeout(timer);
  }, [queued, key]);
  return {
    attempt,
    again: (focus, failure) => {
      focus?.focus();
      // Asked sooner, the registry only refuses again (and may count it against the wait).
      const ms = waitLeft(failure);
      if (ms > 0) setQueued({ key, until: Date.now() + ms });
      else setAttempt((n) => n + 1);
    },
    waitingUntil: waiting,
    withTypedToken,
    said: (error) => (withTypedToken ? promptTokenRefused(error) : error),
    prompt: {
      focus: withTypedToken,
      onSaved: () => {
        setTyped(`${key}#${attempt + 1}`);
        setAttempt((n) => n + 1);
      },
    },
  };
}

/**
 * Shown when a read was refused for want of a token (a registry with REGISTRY_PUBLIC_READ=false,
 * or a token that is no longer valid): the person types one, kept for this tab only.
 */
export function TokenPrompt({ onSaved, focus = false, id = 'read-token', refusal }: { onSaved: () => void; focus?: boolean; id?: string; refusal?: string }) {
  const [token, setToken] = useState('');
  const field = useRef<HTMLInputElement>(null);
  // Shown again after a token typed here was refused: the button that had the focus is gone
  // (the prompt was redrawn), so the focus goes back to the field to type another.
  useEffect(() => {
    if (focus) field.current?.focus();
  }, []);
  // A registry open to anonymous reads refused the token kept in this tab (mistyped on the
  // validate page, or changed since): without it, the person reads as anyone does.
  const canReadWithout = !config.readNeedsToken && savedToken() !== '';
  return (
    <form
      class="token-prompt"
      onSubmit={(e) => {
        e.preventDefault();
        if (!token.trim()) return;
        saveToken(token.trim());
        onSaved();
      }}
    >
      <div class="field">
        <label for={id}>Registry token</label>
        {/* Described by the notice above it (`refusal`: why a token is asked, or that the one
            typed was refused), which the person on the field hears, and invalid when the token
            typed here was refused (`focus`): the alert alone is said once, as it comes. */}
        <input
          ref={field}
          id={id}
          type="password"
          autoComplete="off"
          value={token}
          aria-describedby={refusal ? `${refusal} ${id}-help` : `${id}-help`}
          aria-invalid={focus ? 'true' : undefined}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <small id={`${id}-help`}>
          {config.readNeedsToken ? 'This registry needs a token to read.' : 'This registry reads without a token too.'} A token typed here is kept in this tab's session storage only.
        </small>
      </div>
      <div class="actions">
        <button type="submit">Use this token</button>
        {canReadWithout && (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              saveToken('');
              onSaved();
            }}
          >
            Read without a token
          </button>
        )}
      </div>
    </form>
  );
}
