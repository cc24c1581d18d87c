/**
 * An entry's page (/entries/{id}): the card or MCP server rendered for people, its interfaces
 * with copy buttons, the owner, the revision history with a diff, and the raw JSON.
 * ?revision=N shows an older revision; ?from=&to= compares two; ?matched= names the cards the
 * search it was opened from matched (matched-cards).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { fetchDocument, isAbort, rateWaitLeft, read, RegistryError, type EntryView } from '../api';
import { CopyButton, Countdown, ErrorNotice, formatDate, KIND_LABEL, mayMendByAsking, needsToken, StatusBadges, TokenPrompt, usePageHeading, useRetry, waitLeft } from '../components';
import { config, href } from '../config';
import { Foreign } from '../foreign';
import { documentPaths } from '../../../src/catalog/vocabulary';
import { codePointLength } from '../../../src/lib/code-points';
import { AgentCardView } from '../entry/card-view';
import { History, linkValue } from '../entry/history';
import { McpServerView } from '../entry/mcp-view';
import { StatusFacts } from '../entry/status-facts';
import { obj, pretty } from '../entry/untrusted';
import { searchToReturnTo } from '../last-search';
import { MATCHED_PARAM, matchedCards } from '../matched-cards';
import { navigate } from '../router';
import { savedToken } from '../token';

/**
 * `asked`: the revision the URL asked for when the entry shown was read (undefined: the current one).
 * `switchFailed`: the revision the URL asks for now did not come, for a reason asking again may mend.
 */
type Loaded = { state: 'loading' } | { state: 'failed'; error: unknown } | { state: 'done'; entry: EntryView; asked: number | undefined; switchFailed?: unknown };

/** Where the catalog door serves the entry's documents (src/catalog): [what, path]. What begins a sentence; the rest keeps its capitals (MCP). */
const stableDocuments = (entry: EntryView): [string, string][] =>
  entry.kind === 'agent'
    ? [['The agent card', documentPaths.agentCard(entry.id)]]
    : [
        ['The server and toolspec', documentPaths.mcpDocument(entry.id)],
        ['Its MCP Server Card', documentPaths.mcpServerCard(entry.id)],
      ];

/** How long a document read for a new tab stays its link's target before it is read again. */
const PREPARED_FRESH_MS = 10_000;
/** A link opened in a new tab (middle click, Ctrl/Cmd/Shift click), not followed here. */
const opensElsewhere = (e: MouseEvent) => e.button === 1 || e.ctrlKey || e.metaKey || e.shiftKey;

/** A document's download (or new tab) held for a rate limit's wait: when it is asked (Date.now() time). */
type DownloadHeld = { until: number; filename: string; opening: boolean };

/**
 * A link to one of the entry's documents, downloaded when followed. A registry closed to
 * anonymous reads refuses the plain link (a browser sends no token with it): there a click reads
 * the document with the person's token and saves it from memory. A new tab would get the plain
 * URL's 401 too, and has no token of its own (Chromium does not copy session storage into a tab
 * opened with a middle click), so when the pointer or focus reaches the link it reads the
 * document and the link points at that copy (a blob URL): a tab opened from it shows the JSON.
 * The click that follows takes that read's answer (takeAhead), not a second read of its own.
 * The Copy button beside it gives the document's address.
 */
function DocumentLink({ path, onFailed, onHeld }: { path: string; onFailed: (error: unknown) => void; onHeld: (held: DownloadHeld | undefined) => void }) {
  // Named: a bare `download` is rendered download="true", and the browser saves a file called "true".
  const filename = path.slice(path.lastIndexOf('/') + 1);
  const [prepared, setPrepared] = useState<string>();
  const madeAt = useRef(0);
  const reading = useRef<Promise<string> | undefined>(undefined);
  const current = useRef<string | undefined>(undefined);
  // A tab opened from it has read it by then; a minute leaves slow browsers room.
  const revokeLater = (url: string) => window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
  useEffect(
    () => () => {
      if (current.current) revokeLater(current.current);
    },
    [],
  );
  if (!config.readNeedsToken) {
    return (
      <a href={href(path)} download={filename}>
        {path}
      </a>
    );
  }
  /** The document read now with the person's token, as a blob URL the link then points at. */
  const prepare = (): Promise<string> => {
    reading.current ??= fetchDocument(path)
      .then((blob) => {
        const url = URL.createObjectURL(blob);
        if (current.current) revokeLater(current.current);
        current.current = url;
        madeAt.current = Date.now();
        setPrepared(url);
        return url;
      })
      .finally(() => {
        reading.current = undefined;
      });
    return reading.current;
  };
  /**
   * The read ahead of a click, for that click: one read answers both (each counts against the
   * person's rate-limited reads), and a refusal of it is the click's to say, as its own would be
   * (a rate limit's, read again, was only waited out unsaid). `settled`: when it answered
   * (Date.now() time); `failure`: its refusal.
   */
  const ahead = useRef<{ answer: Promise<string>; settled?: number; failure?: unknown } | undefined>(undefined);
  /**
   * The read ahead still answers a click: still being read, or answered as recently as a copy
   * stays fresh, or refused with a wait not over yet (read again, it would only wait that out).
   */
  const aheadAnswers = (read = ahead.current): read is NonNullable<typeof ahead.current> =>
    read !== undefined && (read.settled === undefined || Date.now() - read.settled <= PREPARED_FRESH_MS || waitLeft(read.failure) > 0);
  // Ahead of a click that may open a new tab; a refusal is said when the link is followed.
  // Not again while one answers (the pointer, then the focus a click gives the link, each reached it).
  // Not under a rate limit's wait: held unsaid, it would spend a read the moment the wait is
  // over on a click that may never come; the click reads then, saying the wait (whileHeld).
  const prepareAhead = () => {
    if (!savedToken() || Date.now() - madeAt.current <= PREPARED_FRESH_MS || aheadAnswers() || rateWaitLeft('read') > 0) return;
    const read: NonNullable<typeof ahead.current> = { answer: prepare() };
    read.answer.then(
      () => (read.settled = Date.now()),
      (error: unknown) => {
        read.settled = Date.now();
        read.failure = error;
      },
    );
    ahead.current = read;
  };
  /** The read ahead's answer, taken by the click that follows (once: the next click reads anew); undefined: the click reads itself. */
  const takeAhead = (): Promise<string> | undefined => {
    const read = ahead.current;
    ahead.current = undefined;
    return aheadAnswers(read) ? read.answer : undefined;
  };
  /**
   * The click's own read, said while it waits for a rate limit's wait to end (one a refusal here or
   * on another view named): it showed nothing for as long (up to a minute), the last refusal's
   * notice still on screen as if the click had done nothing.
   */
  const whileHeld = async <T,>(reading: () => Promise<T>, opening: boolean): Promise<T> => {
    const wait = rateWaitLeft('read');
    if (wait === 0) return reading();
    onFailed(undefined);
    onHeld({ until: Date.now() + wait, filename, opening });
    try {
      return await reading();
    } finally {
      onHeld(undefined);
    }
  };
  const save = async () => {
    try {
      const shared = takeAhead();
      // The link's own copy stays the link's (revoked when replaced); one read here is the click's alone.
      const url = shared ? await shared : URL.createObjectURL(await whileHeld(() => fetchDocument(path), false));
      onFailed(undefined);
      const a = document.createElement('a');
      a.href = url;
      a.download = filename;
      document.body.append(a);
      a.click();
      a.remove();
      if (!shared) revokeLater(url);
    } catch (error) {
      onFailed(error);
    }
  };
  /** Opened in a new tab before the copy was read: read it, then open it (the click still counts as the person's). */
  const openElsewhere = async () => {
    try {
      const url = await (takeAhead() ?? whileHeld(prepare, true));
      onFailed(undefined);
      window.open(url, '_blank', 'noopener');
    } catch (error) {
      onFailed(error);
    }
  };
  const follow = (e: MouseEvent) => {
    if (opensElsewhere(e)) {
      // The prepared copy opens by itself (the read ahead answered this click); without one the new tab would get the plain URL's 401.
      if (prepared && Date.now() - madeAt.current <= PREPARED_FRESH_MS) {
        ahead.current = undefined;
        return;
      }
      e.preventDefault();
      void openElsewhere();
      return;
    }
    if (e.button !== 0) return;
    e.preventDefault();
    void save();
  };
  // No download attribute: with one, a middle click downloads instead of opening a tab.
  return (
    <a href={prepared ?? href(path)} onPointerEnter={prepareAhead} onFocus={prepareAhead} onClick={follow} onAuxClick={follow}>
      {path}
    </a>
  );
}

/**
 * The element id the URL's fragment names (#tool-read_file), followed as it changes. The
 * browser looks for it as the page loads, before the entry has arrived and drawn it: once
 * `drawn`, the page brings it into view itself (and again when the fragment changes, as the card
 * it names may have been folded away: see FoldedCards).
 */
function useFragmentTarget(drawn: boolean): string | undefined {
  let target: string | undefined;
  try {
    target = decodeURIComponent(window.location.hash.slice(1)) || undefined;
  } catch {
    target = undefined; // Not valid percent-encoding: it names no card.
  }
  // A fragment changed in place (a link to #skill-x, or typed) is no navigation the router tells: drawn again for it.
  const [, fragmentChanged] = useState(0);
  useEffect(() => {
    const follow = () => fragmentChanged((n) => n + 1);
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  useEffect(() => {
    if (drawn && target !== undefined) window.document.getElementById(target)?.scrollIntoView();
  }, [drawn, target]);
  return target;
}

/** A revision number from the URL; past the largest integer the registry takes (a garbled link) it is none, as `abc` is. */
const positive = (v: string | null) => (v && /^\d+$/.test(v) && Number(v) >= 1 && Number.isSafeInteger(Number(v)) ? Number(v) : undefined);

export function EntryPage({ id, params, moved }: { id: string; params: URLSearchParams; moved: number }) {
  const revision = positive(params.get('revision'));
  // A link's revision that is no revision number (revision=abc, 0, 2.5: edited by hand): the
  // current revision is read, and the page says so rather than show it as the one asked for.
  const strayRevision = params.get('revision') && revision === undefined ? params.get('revision')! : undefined;
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const retry = useRetry(String(revision));
  // A read held for a rate limit's wait (named by a refusal here or on another view): when it is asked (Date.now() time), said meanwhile.
  const [held, setHeld] = useState<number>();
  const [downloadFailed, setDownloadFailed] = useState<unknown>(undefined);
  const [downloadHeld, setDownloadHeld] = useState<DownloadHeld>();
  // Documents by revision, for the diff (the entry's own revision is one of them).
  const documents = useRef(new Map<number, unknown>());
  const title = loaded.state === 'done' ? `${loaded.entry.name} · ${config.name}` : `Entry · ${config.name}`;
  const heading = usePageHeading(title, moved);
  const target = useFragmentTarget(loaded.state === 'done');

  useEffect(() => {
    const controller = new AbortController();
    // Characters as the registry counts them: code points, so an emoji is one.
    const idChars = codePointLength(id);
    if (idChars > config.maxIdChars) {
      // The registry would refuse it naming its wire request (/parts/0/data/get/id): no entry has such an id.
      setLoaded({ state: 'failed', error: new RegistryError('NOT_FOUND', `No entry has an id of ${idChars} characters: ids are at most ${config.maxIdChars}. Check the link.`) });
      return;
    }
    setLoaded((l) => (l.state === 'done' ? { ...l, switchFailed: undefined } : { state: 'loading' }));
    const wait = rateWaitLeft('read');
    setHeld(wait > 0 ? Date.now() + wait : undefined);
    read<EntryView>({ get: revision === undefined ? { id } : { id, revision } }, controller.signal)
      .finally(() => !controller.signal.aborted && setHeld(undefined))
      .then((entry) => {
        documents.current.set(entry.revision, entry.document);
        setLoaded({ state: 'done', entry, asked: revision });
      })
      .catch((error: unknown) => {
        if (isAbort(error)) return;
        // Another revision that did not come (no answer in time, a gateway's error): the one on
        // screen stays, with the failure and "Try again", rather than "Entry not available".
        setLoaded((l) => (l.state === 'done' && mayMendByAsking(error) ? { ...l, switchFailed: error } : { state: 'failed', error }));
      });
    return () => controller.abort();
  }, [id, revision, retry.attempt]);

  // Read again with a token typed in the prompt, and loaded: the prompt, and the focus in it,
  // are gone; the focus goes to the entry's heading, not back to the top of the page.
  useEffect(() => {
    if (loaded.state === 'done' && retry.withTypedToken) heading.current?.focus();
  }, [loaded]);

  const entryUrl = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v === undefined) next.delete(k);
      else next.set(k, v);
    }
    const qs = next.toString();
    return href(`/entries/${encodeURIComponent(id)}${qs ? `?${qs}` : ''}`);
  };

  if (loaded.state !== 'done') {
    // The same heading element as the loaded page's, so the focus given to it on arrival stays:
    // the header is keyed, as the lines drawn above it differ (the loaded page's status line, a
    // failed switch's notice) and an unkeyed header was drawn anew, the focus lost to the body.
    return (
      <article class="entry-page">
        <p class="breadcrumb">
          <a href={searchToReturnTo(href('/'))}>Search</a>
        </p>
        <header class="entry-head" key="entry-head">
          <h1 ref={heading} tabIndex={-1}>
            {loaded.state === 'loading' ? 'Loading entry…' : 'Entry not available'}
          </h1>
        </header>
        {loaded.state === 'loading' && held !== undefined && (
          <p class="muted" role="status">
            Loading in <Countdown until={held} />, when the registry allows it.
          </p>
        )}
        {loaded.state === 'failed' && (
          <ErrorNotice
            id="entry-refusal"
            error={retry.said(loaded.error)}
            title={loaded.error instanceof RegistryError && loaded.error.code === 'NOT_FOUND' ? 'No such entry' : 'The entry could not be loaded'}
            onRetry={() => retry.again(heading.current)}
          />
        )}
        {loaded.state === 'failed' && revision !== undefined && loaded.error instanceof RegistryError && loaded.error.code === 'NOT_FOUND' && (
          // A link to an old revision outlives it (the registry keeps the last REGISTRY_MAX_REVISIONS),
          // or names one past the newest: the registry's message above says which, and this adds
          // only the way on (a reason of its own, "old revisions leave it", was wrong for the latter).
          <p>
            <a href={entryUrl({ revision: undefined, from: undefined, to: undefined })}>See the current revision</a>.
          </p>
        )}
        {loaded.state === 'failed' && needsToken(loaded.error) && (
          <TokenPrompt refusal="entry-refusal" {...retry.prompt} />
        )}
      </article>
    );
  }

  const { entry } = loaded;
  // Another revision asked for (a link in the history, Back): the one shown stays until it
  // arrives, and the page says it is coming, not looking as if the link did nothing.
  // Marked busy meanwhile: the parts the revision draws, each holding no live region. Not the
  // article: a screen reader holds back what changes in a busy element, and "Loading revision N…",
  // a Copy button's "Copied" and the other statuses in there went unsaid.
  const switching = loaded.asked !== revision && loaded.switchFailed === undefined;
  const asked = revision === undefined ? 'the current revision' : `revision ${revision}`;
  const revisions = entry.revisions ?? [{ revision: entry.revision, updatedAt: entry.updatedAt }];
  const latest = revisions[0]?.revision ?? entry.revision;
  const document = obj(entry.document) ?? {};
  const load = async (rev: number, signal: AbortSignal) => {
    if (documents.current.has(rev)) return documents.current.get(rev);
    const view = await read<EntryView>({ get: { id, revision: rev } }, signal);
    documents.current.set(rev, view.document);
    return view.document;
  };

  return (
    <article class="entry-page">
      <p class="breadcrumb">
        <a href={searchToReturnTo(href('/'))}>Search</a> <span aria-hidden="true">›</span> {KIND_LABEL[entry.kind]}
      </p>
      <p class="muted entry-switching" role="status">
        {switching ? held === undefined ? `Loading ${asked}…` : <>Loading {asked} in <Countdown until={held} />, when the registry allows it.</> : ''}
      </p>
      {loaded.switchFailed !== undefined && (
        <ErrorNotice
          error={loaded.switchFailed}
          title={`${asked[0]!.toUpperCase()}${asked.slice(1)} could not be loaded; revision ${entry.revision} is still shown`}
          onRetry={() => retry.again(heading.current)}
        />
      )}
      {strayRevision !== undefined && (
        <div class="notice" role="status">
          <p>
            This link asks for revision{' '}
            <code class="url">
              <Foreign text={linkValue(strayRevision)} />
            </code>, which is not a revision number (1, 2, 3…): the current revision is shown.
          </p>
        </div>
      )}
      <header class="entry-head" key="entry-head" aria-busy={switching}>
        <h1 ref={heading} tabIndex={-1} dir="auto">
          {entry.name}
        </h1>
        <p class="badges">
          <span class={`badge kind-${entry.kind}`}>{KIND_LABEL[entry.kind]}</span>
          {entry.protocolVersion && <span class="badge subtle">A2A {entry.protocolVersion}</span>}
          <StatusBadges status={entry} current={entry.revision !== latest ? latest : undefined} />
        </p>
        <p class="description prose" dir="auto">
          {entry.description.trim()}
        </p>
        <dl class="facts inline">
          <dt>Owner</dt>
          <dd>{entry.owner}</dd>
          <dt>Revision</dt>
          <dd>
            {entry.revision}
            {entry.revision !== latest && (
              <>
                {' '}
                (not the current one: <a href={entryUrl({ revision: undefined })}>see revision {latest}</a>)
              </>
            )}
          </dd>
          <dt>Updated</dt>
          <dd>{formatDate(entry.updatedAt)}</dd>
          <dt>Registered</dt>
          <dd>{formatDate(entry.createdAt)}</dd>
          <dt>Id</dt>
          <dd>
            <code>{entry.id}</code>
          </dd>
          <StatusFacts entry={entry} current={entry.revision !== latest ? latest : undefined} />
        </dl>
      </header>

      <section aria-labelledby="interfaces-h">
        <h2 id="interfaces-h">Interfaces</h2>
        <ul class="interfaces">
          {entry.interfaces.map((i) => (
            <li>
              {/* Busy without its Copy button, whose status is a live region. */}
              <span aria-busy={switching}>
                <span class="badge subtle">
                  {i.protocolBinding}
                  {i.protocolVersion ? ` ${i.protocolVersion}` : ''}
                </span>
                {i.tenant && <span class="muted"> tenant {i.tenant}</span>} <code class="url">{i.url}</code>
              </span>{' '}
              <CopyButton text={i.url} label={`Copy the ${i.protocolBinding} URL ${i.url}`} />
            </li>
          ))}
        </ul>
      </section>

      <div class="entry-document" aria-busy={switching}>
        {entry.kind === 'agent' ? (
          <AgentCardView card={document} matched={matchedCards(params)} target={target} />
        ) : (
          <McpServerView document={document} matched={matchedCards(params)} target={target} />
        )}
      </div>

      <History
        revisions={revisions}
        shown={entry.revision}
        switching={switching}
        from={positive(params.get('from'))}
        to={positive(params.get('to'))}
        notNumbers={[params.get('from'), params.get('to')].filter((v): v is string => !!v && positive(v) === undefined)}
        // Without the search's matches: a search matches the current revision, and another
        // revision's cards of the same names are not what it matched.
        revisionUrl={(rev) => entryUrl({ revision: rev === latest ? undefined : String(rev), from: undefined, to: undefined, [MATCHED_PARAM]: undefined })}
        compare={(from, to) => navigate(entryUrl({ from: String(from), to: String(to) }), { inPlace: true })}
        load={load}
      />

      <section aria-labelledby="raw-h">
        <h2 id="raw-h">Raw JSON</h2>
        <ul class="plain documents">
          {stableDocuments(entry).map(([label, path]) => (
            <li>
              {label} (current revision) at a stable URL: <DocumentLink path={path} onFailed={setDownloadFailed} onHeld={setDownloadHeld} />{' '}
              <CopyButton text={new URL(href(path), window.location.href).href} label={`Copy the URL of ${label.charAt(0).toLowerCase()}${label.slice(1)}`} />
            </li>
          ))}
        </ul>
        <p class="muted download-held" role="status">
          {downloadHeld && (
            <>
              {downloadHeld.opening ? 'Opening' : 'Downloading'} {downloadHeld.filename} in <Countdown until={downloadHeld.until} />, when the registry allows it.
            </>
          )}
        </p>
        {downloadFailed !== undefined && <ErrorNotice id="download-refusal" error={downloadFailed} title="The document could not be downloaded" />}
        {downloadFailed !== undefined && needsToken(downloadFailed) && (
          <TokenPrompt
            refusal="download-refusal"
            onSaved={() => {
              setDownloadFailed(undefined);
              // The prompt goes with the refusal, and the focus in it: it waits on the document's
              // link, to download it with the token typed (not lost to the top of the page).
              window.document.querySelector<HTMLAnchorElement>('.documents a')?.focus();
            }}
          />
        )}
        <details>
          <summary>
            The {entry.kind === 'agent' ? 'agent card' : 'server and toolspec'} as registered (revision {entry.revision})
          </summary>
          <p>
            <CopyButton text={pretty(entry.document)} label="Copy the raw JSON" />
          </p>
          <pre class="code" tabIndex={0} aria-busy={switching}>
            {pretty(entry.document)}
          </pre>
        </details>
      </section>
    </article>
  );
}
