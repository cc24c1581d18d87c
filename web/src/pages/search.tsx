/**
 * The search page: results as you type (debounced), filters, what matched with the words
 * marked, paging. Everything that decides the results is in the URL (q, kind, tags, binding,
 * version, verified, health, p), so a search can be shared and Back returns to it.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { rememberSearch } from '../last-search';
import { entryLink } from '../matched-cards';
import { isAbort, rateWaitLeft, read, RegistryError, type SearchHit, type SearchMatch, type SearchPage as Page } from '../api';
import { Countdown, ErrorNotice, KIND_LABEL, needsToken, StatusBadges, TokenPrompt, usePageHeading, useRetry } from '../components';
import { config, href } from '../config';
import { Foreign, showBidiControls } from '../foreign';
import { Highlight, queryTerms } from '../highlight';
// Cut between characters, never inside an emoji (half a surrogate pair showed as �).
import { clipped } from '../../../src/lib/clipped';
import { codePointLength } from '../../../src/lib/code-points';
import { leftPlace, navigate } from '../router';

const PAGE_SIZE = 20;
const TYPING_DEBOUNCE_MS = 250;
/** A search answered within this keeps the last results on screen until then (no flicker); a slower one marks them as the last search's. */
const SLOW_SEARCH_MS = 400;
/** URL parameters of the filters the page has controls for (p and n only place the search in the pages). */
const CONTROL_PARAMS = ['kind', 'tags', 'binding', 'version', 'verified', 'health'];
/** The search filter keys those controls set. */
const CONTROLLED_KEYS = ['kind', 'tags', 'protocolBinding', 'protocolVersion', 'verified', 'health'];

/**
 * The registry's other search filters (owner, streaming, readOnly, capabilities, ...): the page
 * has no control for them, but a link that carries one, by its own name (`/?owner=alice`,
 * `/?q=file&readOnly=false`), meant it, so it applies (listed under the filters, each with a way
 * to remove it). Names the page's own parameters take are not read as filters.
 */
const LINK_FILTERS = config.filters.filter((key) => !CONTROLLED_KEYS.includes(key) && !['q', 'p', 'n', ...CONTROL_PARAMS].includes(key));

/** URL parameters that describe the search: the filters' and the link's. */
const FILTER_PARAMS = [...CONTROL_PARAMS, ...LINK_FILTERS];

/** The select filters: URL parameter, label, and options (the first is "no filter"). */
const SELECTS: { param: string; filterKey: string; label: string; options: readonly (readonly [string, string])[] }[] = [
  {
    param: 'kind',
    filterKey: 'kind',
    label: 'Kind',
    options: [
      ['', 'All kinds'],
      ['agent', 'Agents'],
      ['mcp-server', 'MCP servers'],
    ],
  },
  {
    param: 'binding',
    filterKey: 'protocolBinding',
    label: 'Binding',
    options: [
      ['', 'Any binding'],
      ['JSONRPC', 'JSON-RPC'],
      ['HTTP+JSON', 'HTTP+JSON'],
      ['GRPC', 'gRPC'],
    ],
  },
  {
    param: 'version',
    filterKey: 'protocolVersion',
    label: 'A2A version',
    options: [
      ['', 'Any version'],
      ['1.0', '1.0'],
      ['0.3', '0.3'],
    ],
  },
  {
    param: 'health',
    filterKey: 'health',
    label: 'Health',
    options: [
      ['', 'Registry default'],
      ['ok', 'Reachable'],
      ['unreachable', 'Unreachable'],
      ['invalid', 'Invalid live card'],
      ['any', 'Any, including hidden'],
    ],
  },
];

const supports = (key: string) => config.filters.includes(key);

/**
 * The select's options, plus the URL's value when the list does not offer it (a link with
 * version=0.3.0, or a binding URI): the search uses it, so the select shows it, not a blank.
 * A value that cannot apply (an unknown kind or health) never gets here: it leaves the URL.
 */
function withLinked(select: (typeof SELECTS)[number], value: string): readonly (readonly [string, string])[] {
  if (!value || select.options.some(([v]) => v === value)) return select.options;
  return [...select.options, [value, value]];
}

const KINDS = ['agent', 'mcp-server'];
const HEALTH = ['ok', 'unreachable', 'invalid', 'any'];

/**
 * The URL's filter values that cannot apply (a hand-edited or old link: kind=bogus,
 * verified=yes, a filter this registry does not offer), each with why, as the notice says it.
 * The page leaves them out of the URL and says so, rather than count a filter that filters
 * nothing or send the registry a value it refuses.
 */
function ignoredFilters(params: URLSearchParams): Map<string, string> {
  const ignored = new Map<string, string>();
  const kind = params.get('kind');
  if (kind && !KINDS.includes(kind)) ignored.set('kind', `not a kind of entry (${KINDS.join(' or ')})`);
  // Longer than the registry takes: it would refuse the whole search, naming its wire request.
  // In characters as the registry counts them (code points: an emoji is one).
  const longest = (key: string) => config.filterMaxChars[key] ?? Infinity;
  const tooLong = (key: string) => `longer than ${longest(key)} characters, the most this registry takes`;
  const tags = params.get('tags');
  if (tags && splitTags(tags).length === 0) ignored.set('tags', 'no tag in it');
  else if (tags && splitTags(tags).some((t) => codePointLength(t) > longest('tags'))) ignored.set('tags', `a tag ${tooLong('tags')}`);
  // Searching with the first ones only would answer another search than the link's.
  else if (tags && splitTags(tags).length > config.maxFilterValues) ignored.set('tags', `more than ${config.maxFilterValues} tags, the most this registry takes`);
  // Only white space (a link's `binding=%20`): the registry refuses a blank filter value, and the
  // whole search failed with its refusal; left out, as a link's blank text filter is.
  const binding = params.get('binding');
  if (binding && binding.trim() === '') ignored.set('binding', 'blank');
  else if (binding && codePointLength(binding) > longest('protocolBinding')) ignored.set('binding', tooLong('protocolBinding'));
  const version = params.get('version');
  if (version && version.trim() === '') ignored.set('version', 'blank');
  else if (version && codePointLength(version) > longest('protocolVersion')) ignored.set('version', tooLong('protocolVersion'));
  const verified = params.get('verified');
  if (verified && !supports('verified')) ignored.set('verified', 'this registry does not check signatures');
  else if (verified && verified !== 'true') ignored.set('verified', 'only verified=true filters');
  const health = params.get('health');
  if (health && !supports('health')) ignored.set('health', 'this registry does not check health');
  else if (health && !HEALTH.includes(health)) ignored.set('health', `not a health status (${HEALTH.join(', ')})`);
  for (const key of LINK_FILTERS) {
    const value = params.get(key);
    const why = value ? linkFilterProblem(key, value) : undefined;
    if (why) ignored.set(key, why);
  }
  return ignored;
}

/** Why a link's value of a filter the page has no control for cannot apply, or undefined when it can (see linkFilterValue). */
function linkFilterProblem(key: string, value: string): string | undefined {
  const type = config.filterTypes[key];
  const longest = config.filterMaxChars[key] ?? Infinity;
  const tooLong = `longer than ${longest} characters, the most this registry takes`;
  if (type === undefined) return 'this page does not know what the registry takes for it';
  if (type === 'boolean') return value === 'true' || value === 'false' ? undefined : 'only true or false filters';
  if (Array.isArray(type)) return type.includes(value) ? undefined : `not one of ${type.join(', ')}`;
  if (type === 'text') return value.trim() === '' ? 'blank' : codePointLength(value) > longest ? tooLong : undefined;
  const values = splitTags(value);
  if (values.length === 0) return 'no value in it';
  if (values.some((v) => codePointLength(v) > longest)) return `a value ${tooLong}`;
  if (values.length > config.maxFilterValues) return `more than ${config.maxFilterValues} values, the most this registry takes`;
  return undefined;
}

/** The search filter's value for a link's parameter that applies: true or false, the text, or the comma-separated list. */
function linkFilterValue(key: string, value: string): unknown {
  const type = config.filterTypes[key];
  if (type === 'boolean') return value === 'true';
  if (type === 'list') return splitTags(value);
  return value;
}

/** The filters the URL sets that apply (the count beside "Filters"). */
const activeFilters = (params: URLSearchParams) => {
  const ignored = ignoredFilters(params);
  return FILTER_PARAMS.filter((k) => params.get(k) && !ignored.has(k));
};

/** The contract's search request for the URL's parameters (without ignored filters). */
function searchRequest(params: URLSearchParams): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  const ignored = ignoredFilters(params);
  const kind = params.get('kind');
  if (kind && !ignored.has('kind')) filter.kind = kind;
  const tags = splitTags(params.get('tags') ?? '');
  if (tags.length > 0 && !ignored.has('tags')) filter.tags = tags;
  const binding = params.get('binding');
  if (binding && !ignored.has('binding')) filter.protocolBinding = binding;
  const version = params.get('version');
  if (version && !ignored.has('version')) filter.protocolVersion = version;
  if (params.get('verified') && !ignored.has('verified')) filter.verified = true;
  const health = params.get('health');
  if (health && !ignored.has('health')) filter.health = health;
  for (const key of LINK_FILTERS) {
    const value = params.get(key);
    if (value && !ignored.has(key)) filter[key] = linkFilterValue(key, value);
  }
  const request: Record<string, unknown> = { query: params.get('q') ?? '', limit: PAGE_SIZE };
  if (Object.keys(filter).length > 0) request.filter = filter;
  const page = params.get('p');
  if (page) request.pageToken = page;
  return request;
}

const splitTags = (s: string) =>
  s
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

/** The URL for the given search parameters (empty ones left out, paging reset unless kept). */
function searchUrl(params: URLSearchParams, changes: Record<string, string | undefined>, keepPage = false): string {
  const next = new URLSearchParams(params);
  if (!keepPage) {
    next.delete('p');
    next.delete('n');
  }
  for (const [k, v] of Object.entries(changes)) {
    if (v) next.set(k, v);
    else next.delete(k);
  }
  const qs = next.toString();
  return href(`/${qs ? `?${qs}` : ''}`);
}

/** Page tokens seen this session, per search, so "Previous" can be a link. */
const pageChains = new Map<string, string[]>();
const searchKey = (params: URLSearchParams) => JSON.stringify([params.get('q') ?? '', ...FILTER_PARAMS.map((k) => params.get(k) ?? '')]);

/** `answer`: which answer of this page's life it is (counted), so each is drawn as a new count (see answerShown). */
type Result = { state: 'loading' } | { state: 'done'; page: Page; folded: boolean; key: string; answer: number } | { state: 'failed'; error: unknown };

/**
 * One result per entry. A registry that answers one hit per matching skill or tool (before
 * results per entry) gives the same entry several times: the later hits become its `matches`.
 */
function foldByEntry(hits: SearchHit[]): { hits: SearchHit[]; folded: boolean } {
  const byId = new Map<string, SearchHit>();
  const out: SearchHit[] = [];
  for (const hit of hits) {
    const first = byId.get(hit.id);
    if (!first) {
      const copy = { ...hit, matches: [...(hit.matches ?? [])] };
      byId.set(hit.id, copy);
      out.push(copy);
    } else {
      first.matches!.push(hit.match, ...(hit.matches ?? []));
      first.moreInEntry = (first.moreInEntry ?? 0) + (hit.moreInEntry ?? 0) || undefined;
    }
  }
  return { hits: out, folded: out.length < hits.length };
}

export function SearchPage({ params, moved }: { params: URLSearchParams; moved: number }) {
  const query = params.get('q') ?? '';
  // Words to search for: a blank query (a link with q=%20) searches everything, as none does.
  const hasWords = query.trim() !== '';
  const linkedNumber = pageNumberOf(params);
  // The tab's title quotes the words: a bidirectional control in them would reorder the registry's name after them.
  const heading = usePageHeading(hasWords ? `“${showBidiControls(query.trim())}” · ${config.name}` : config.name, moved);
  const [text, setText] = useState(query);
  const [result, setResult] = useState<Result>({ state: 'loading' });
  const [slow, setSlow] = useState(false);
  const requestKey = params.toString();
  const retry = useRetry(requestKey);
  // The search of this URL waits for the wait the last refusal of a read named (a rate limit's
  // Retry-After, whatever read it refused, on whichever view): the seconds left when it was asked.
  const [deferred, setDeferred] = useState<{ key: string; until: number }>();
  const terms = useMemo(() => queryTerms(query), [query]);
  // Filters of the URL that cannot apply: left out of it (in place of this history entry), and
  // said once, for the URL without them.
  const ignored = useMemo(() => ignoredFilters(params), [requestKey]);
  const [leftOut, setLeftOut] = useState<{ key: string; items: [string, string, string][] }>();
  // A page number without the page's token (a link whose long token was cut off): the first
  // page is shown, and the URL says so, so a reload, Back or the link shared on shows it as that.
  const strayNumber = !params.get('p') && params.has('n');
  useEffect(() => {
    if (ignored.size === 0 && !strayNumber) return;
    const changes: Record<string, undefined> = Object.fromEntries([...ignored.keys()].map((k) => [k, undefined]));
    if (strayNumber) changes.n = undefined;
    const url = searchUrl(params, changes, true);
    if (ignored.size > 0) {
      setLeftOut({ key: new URL(url, window.location.href).searchParams.toString(), items: [...ignored].map(([k, why]) => [k, params.get(k) ?? '', why]) });
    }
    navigate(url, { replace: true });
  }, [requestKey]);

  // The URL changed elsewhere (Back, a shared link): the box shows its query. Not when the URL
  // got the words the pause wrote from the box: a key pressed since (between the pause's write
  // and its drawing, on a busy machine) is in the box, and writing the URL's words over it lost it.
  const typing = useRef(false);
  const written = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (!typing.current && query !== written.current) setText(query);
  }, [query]);
  // Back, Forward or a link while words typed wait for the pause: they go with the search the
  // person left, and the box shows the one they went to.
  useEffect(() => {
    typing.current = false;
    setText(query);
  }, [moved]);

  // Whether the words typed in the box's current stay already made a history entry. The first
  // write of a stay adds one, so Back returns to the search before (when every write replaced
  // the entry it was typed on, Back from a second search left the page, the first one lost);
  // the writes after it, words still being typed or corrected, replace it, as a filter's
  // changes while it keeps the focus do. A new stay starts when the box gets the focus, on a
  // move (Back, a link) and after Enter.
  const boxWrote = useRef(false);
  useEffect(() => {
    boxWrote.current = false;
  }, [moved]);

  // Typing: the URL follows after a pause (see boxWrote).
  const typingPause = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (text === query) {
      typing.current = false;
      return;
    }
    typing.current = true;
    const at = window.location.href;
    const timer = window.setTimeout(() => {
      // Moved elsewhere meanwhile (a link): writing this search over that history entry would undo it.
      if (window.location.href !== at) return;
      typing.current = false;
      written.current = text.trim() ? text : '';
      // The URL as it is now, not as it was drawn: a filter set since (before this effect ran) stays.
      navigate(searchUrl(new URLSearchParams(window.location.search), { q: text.trim() ? text : undefined }), { replace: boxWrote.current, inPlace: true });
      boxWrote.current = true;
    }, TYPING_DEBOUNCE_MS);
    typingPause.current = timer;
    return () => window.clearTimeout(timer);
  }, [text]);
  // The pause's write is dropped the moment the words go elsewhere, not when the page next draws:
  // with Enter (they are searched already), and with Back or Forward. Enter's search leaves the
  // box's words as they were, so the pause stayed set; Back then returned to the URL it was set
  // at, and the pause, ending before the page drew the Back, wrote the words over it: the page
  // went forward again to the search Back had left.
  useEffect(() => {
    const dropPause = () => window.clearTimeout(typingPause.current);
    window.addEventListener('popstate', dropPause);
    return () => window.removeEventListener('popstate', dropPause);
  }, []);

  // The entry page's way back returns here, to these words, filters and page.
  useEffect(() => rememberSearch(searchUrl(params, {}, true)), [requestKey]);

  // The filter control whose changes make the current history entry (see setFilter): forgotten
  // when the focus moves to a control (that one or another) or the page moves (Back, a link).
  const changing = useRef<string | undefined>(undefined);
  // The searches (URL parameters) a filter's change set: each searched after the typing pause, so
  // options passed on the way (arrowing through a select) are not each searched. Kept by search,
  // not as one flag for the next: a change can come between a search's drawing and its effect.
  const setByFilter = useRef(new Set<string>());
  useEffect(() => {
    changing.current = undefined;
    setByFilter.current.clear();
  }, [moved]);

  const answers = useRef(0);
  // The URL decides the search; a newer one cancels the one in flight.
  useEffect(() => {
    // About to be replaced by the URL without its ignored filters (or stray page number): that one is searched.
    if (ignored.size > 0 || strayNumber) return;
    // Words longer than the registry searches: it would refuse them naming its wire request
    // (/parts/0/data/search/query). Said here, with the words kept in the box to shorten.
    // Characters as the registry counts them: code points, so an emoji is one (its length is two).
    const chars = codePointLength(query);
    if (chars > config.maxQueryChars) {
      const message = `The search words are ${chars.toLocaleString('en-US')} characters; this registry searches at most ${config.maxQueryChars.toLocaleString('en-US')}. Shorten them.`;
      setResult({ state: 'failed', error: new RegistryError('TOO_LONG', message) });
      return;
    }
    // A page token longer than any the registry gives (a garbled link): refused as one cut short
    // is, with the way to the first page, not as the registry's refusal naming its wire request.
    const token = params.get('p') ?? '';
    if (token.length > config.maxPageTokenChars) {
      const message = `This link's page token is ${token.length.toLocaleString('en-US')} characters; the registry's are at most ${config.maxPageTokenChars}.`;
      setResult({ state: 'failed', error: new RegistryError('BAD_REQUEST', message) });
      return;
    }
    const controller = new AbortController();
    setResult((r) => (r.state === 'done' ? r : { state: 'loading' }));
    setSlow(false);
    let slowTimer: number | undefined;
    const ask = () => {
      setDeferred(undefined);
      slowTimer = window.setTimeout(() => setSlow(true), SLOW_SEARCH_MS);
      read<Page>({ search: searchRequest(params) }, controller.signal)
        .then((page) => {
          window.clearTimeout(slowTimer);
          const key = searchKey(params);
          if (linkedNumber !== undefined) {
            const chain = pageChains.get(key) ?? [];
            chain[linkedNumber - 1] = params.get('p') ?? '';
            if (page.nextPageToken) chain[linkedNumber] = page.nextPageToken;
            pageChains.set(key, chain);
          }
          const { hits, folded } = foldByEntry(page.results);
          setResult({ state: 'done', page: { ...page, results: hits }, folded, key: requestKey, answer: ++answers.current });
        })
        .catch((error: unknown) => {
          window.clearTimeout(slowTimer);
          if (isAbort(error)) return;
          setResult({ state: 'failed', error });
        });
    };
    // Refused with a wait not yet over: asked when it is (typing waits too, not only Search), said meanwhile.
    let waitTimer: number | undefined;
    const askWhenAllowed = () => {
      const wait = rateWaitLeft('read');
      if (wait > 0) {
        waitTimer = window.setTimeout(ask, wait);
        setDeferred({ key: requestKey, until: Date.now() + wait });
      } else ask();
    };
    const paused = setByFilter.current.delete(requestKey);
    const pauseTimer = paused ? window.setTimeout(askWhenAllowed, TYPING_DEBOUNCE_MS) : undefined;
    if (!paused) askWhenAllowed();
    return () => {
      window.clearTimeout(pauseTimer);
      window.clearTimeout(waitTimer);
      window.clearTimeout(slowTimer);
      controller.abort();
    };
  }, [requestKey, retry.attempt]);

  // Back from an entry (or from the next page): once these results are drawn, the person is
  // where they were, at the link they followed, not at the top of the page again.
  // The search asked again with a token typed in the prompt is answered: the prompt, and the
  // focus in it, are gone; the focus goes to what was found, not back to the top of the page.
  const count = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (result.state === 'done' && result.key === requestKey && retry.withTypedToken) count.current?.focus();
  }, [result]);

  // Another page of these results asked for (Next, Previous): once it is drawn, the focus goes to
  // its count ("21–22 of 22 results"), read out, the next Tab on its first result; not to the
  // page's heading, ten Tab stops of form and filters above the results.
  const pagedTo = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (result.state !== 'done' || result.key !== pagedTo.current) return;
    pagedTo.current = undefined;
    count.current?.focus();
  }, [result]);
  const turnPage = (e: MouseEvent) => {
    const link = e.currentTarget as HTMLAnchorElement;
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return; // a new tab or window
    e.preventDefault();
    const url = new URL(link.href);
    pagedTo.current = url.searchParams.toString();
    navigate(url.pathname + url.search, { inPlace: true });
  };

  const restoredFor = useRef(-1);
  useEffect(() => {
    if (result.state !== 'done' || result.key !== requestKey || restoredFor.current === moved) return;
    restoredFor.current = moved;
    const place = leftPlace();
    if (!place) return;
    const link = place.link === null ? undefined : [...document.querySelectorAll<HTMLAnchorElement>('.results a')].find((a) => a.getAttribute('href') === place.link);
    link?.focus({ preventScroll: true });
    window.scrollTo(0, place.scrollY);
  }, [result, moved]);

  // A filter set within the typing pause takes the words in the box along (they are what the person sees).
  // The first change of a control adds a history entry; its next changes while it keeps the focus
  // (arrowing through a select's options, each a change) replace that entry, so Back returns to
  // the search before, not to each option passed. The search waits for a pause, as typing does.
  const setFilter = (key: string, value: string | undefined) => {
    const words = typing.current ? { q: text.trim() ? text : undefined } : {};
    typing.current = false;
    const again = changing.current === key;
    changing.current = key;
    const url = searchUrl(params, { ...words, [key]: value });
    setByFilter.current.add(new URL(url, window.location.href).searchParams.toString());
    navigate(url, { inPlace: true, replace: again });
  };
  const stale = slow && result.state === 'done' && result.key !== requestKey;
  // The answer the count says, if it says one. Each answer's count is a node of its own in the
  // live region, which says what is added: an answer that reads as the last one did ("1 result"
  // for other words, or the same search asked again) is said too, not kept silent as unchanged.
  const answerShown = retry.waitingUntil === undefined && deferred?.key !== requestKey && !stale && result.state === 'done' ? result.answer : undefined;
  // A number past the results (n=999 on the second page's link) numbers nothing: unknown, as a missing one.
  const pageNumber = result.state === 'done' && linkedNumber !== undefined && beyondResults(result.page, linkedNumber) ? undefined : linkedNumber;
  const previousToken = pageNumber !== undefined && pageNumber > 1 ? pageChains.get(searchKey(params))?.[pageNumber - 2] : undefined;
  // Words longer than the registry searches are the box's error: the box is marked invalid and
  // described by the refusal, so a screen reader on it hears what is wrong (WCAG 3.3.1), not
  // only the alert said once as it came.
  const wordsRefused = result.state === 'failed' && result.error instanceof RegistryError && result.error.code === 'TOO_LONG';

  return (
    <section class="search-page">
      <h1 ref={heading} tabIndex={-1}>
        Find agents and MCP servers
      </h1>
      <form
        role="search"
        class="search-form"
        onSubmit={(e) => {
          e.preventDefault();
          typing.current = false;
          window.clearTimeout(typingPause.current);
          const url = searchUrl(params, { q: text.trim() ? text : undefined });
          // The search shown, asked again (after "cannot be reached", a rate limit, or to see
          // what changed): search again in place; a new history entry would only make Back stall.
          // Under a rate limit, once its wait is over: asked sooner, it is only refused again.
          if (url === searchUrl(params, {}, true)) retry.again(undefined, result.state === 'failed' ? result.error : undefined);
          else navigate(url, { replace: boxWrote.current, inPlace: text !== query });
          // Words typed after Enter are another search: their first write is a history entry of its own.
          boxWrote.current = false;
        }}
      >
        <label for="q">Search skills, tools, agents and servers</label>
        <div class="search-row">
          <input
            id="q"
            type="search"
            dir="auto"
            name="q"
            value={text}
            autoComplete="off"
            spellcheck={false}
            placeholder="e.g. translate invoices"
            aria-describedby={wordsRefused ? 'result-count search-refusal' : 'result-count'}
            aria-invalid={wordsRefused ? 'true' : undefined}
            onInput={(e) => setText(e.currentTarget.value)}
            onFocus={() => (boxWrote.current = false)}
          />
          <button type="submit">Search</button>
        </div>
        <Filters params={params} moved={moved} setFilter={setFilter} onControlFocused={() => (changing.current = undefined)} />
      </form>
      {leftOut?.key === requestKey && (
        <div class="notice" role="status">
          <p>{leftOut.items.length === 1 ? 'A filter in this link does not apply and was left out:' : 'Filters in this link do not apply and were left out:'}</p>
          <ul>
            {leftOut.items.map(([key, value, why]) => (
              <li>
                <code class="url">
                  {key}=<Foreign text={clipped(value, 60)} />
                </code>
                : {why}.
              </li>
            ))}
          </ul>
        </div>
      )}

      {/* Outside the results marked busy: a screen reader holds back what changes in a busy
          element, so "Searching…" in there went unsaid (and a count came late, if at all). */}
      <p id="result-count" ref={count} tabIndex={-1} class="result-count" role="status" aria-live="polite">
        <span key={answerShown ?? 'no-answer'}>
          {retry.waitingUntil !== undefined
            ? <>Searching again in <Countdown until={retry.waitingUntil} />, when the registry allows it.</>
            : deferred?.key === requestKey ? <>Searching in <Countdown until={deferred.until} />, when the registry allows it.</>
            : stale ? 'Searching…' : result.state === 'done' ? countText(result.page, pageNumber, hasWords || FILTER_PARAMS.some((k) => params.get(k)), result.folded) : result.state === 'loading' ? 'Searching…' : ''}
        </span>
      </p>
      {/* A slow search for other words or filters: the results shown are the last search's, said and drawn so. */}
      <div class={`results${stale ? ' stale' : ''}`} aria-busy={result.state === 'loading' || stale}>
        {result.state === 'failed' && (
          <ErrorNotice
            id="search-refusal"
            error={retry.said(result.error)}
            title="The search failed"
            onRetry={() => retry.again(count.current)}
          />
        )}
        {result.state === 'failed' && params.get('p') && result.error instanceof RegistryError && result.error.code === 'BAD_REQUEST' && (
          // A page link the registry no longer honours (cut short when shared, or from before its
          // page-token secret changed): the search itself is still good.
          <p>
            This link to a later page of results is out of date or incomplete. <a href={searchUrl(params, {})}>Go to the first page of this search</a>.
          </p>
        )}
        {result.state === 'failed' && needsToken(result.error) && (
          <TokenPrompt refusal="search-refusal" {...retry.prompt} />
        )}
        {result.state === 'done' && result.page.results.length === 0 && <EmptyResults params={params} reason={result.page.reason} />}
        {result.state === 'done' && result.page.results.length > 0 && (
          <ol class="hits" start={pageNumber === undefined ? undefined : (pageNumber - 1) * PAGE_SIZE + 1}>
            {result.page.results.map((hit) => (
              <Hit hit={hit} terms={terms} showMatch={hasWords} />
            ))}
          </ol>
        )}
        {result.state === 'done' && (pageNumber !== 1 || result.page.nextPageToken) && (
          <nav class="pager" aria-label="Result pages">
            {pageNumber !== 1 && (
              <a href={searchUrl(params, previousToken && pageNumber !== undefined ? { p: previousToken, n: String(pageNumber - 1) } : {}, false)} rel="prev" onClick={turnPage}>
                {previousToken !== undefined || pageNumber === 2 ? '← Previous page' : '← First page'}
              </a>
            )}
            <span>{pageNumber === undefined ? 'A later page' : `Page ${pageNumber}`}</span>
            {result.page.nextPageToken && (
              // The page after one of unknown number is of unknown number too: no n.
              <a href={searchUrl(params, { p: result.page.nextPageToken, n: pageNumber === undefined ? undefined : String(pageNumber + 1) }, true)} rel="next" onClick={turnPage}>
                Next page →
              </a>
            )}
          </nav>
        )}
      </div>
    </section>
  );
}

/**
 * The page's number as the URL gives it: 1 without a page token (the first page has none); with
 * one, n as the page writes it (a whole number from 2), or undefined when the link has none
 * (edited by hand, or from elsewhere): the token is opaque, so the page does not guess.
 */
function pageNumberOf(params: URLSearchParams): number | undefined {
  if (!params.get('p')) return 1;
  const n = params.get('n') ?? '';
  return /^[1-9][0-9]{0,5}$/.test(n) && Number(n) >= 2 ? Number(n) : undefined;
}

/** A page number whose results would start past the search's exact total: it numbers nothing. */
const beyondResults = (page: Page, pageNumber: number) => page.totalExact !== false && (pageNumber - 1) * PAGE_SIZE >= page.total && page.total > 0;

/** `narrowed`: words or filters were given, so nothing found is no result, not an empty registry. */
function countText(page: Page, pageNumber: number | undefined, narrowed: boolean, folded: boolean): string {
  if (page.total === 0) return narrowed ? 'No results.' : 'No entries.';
  const what = folded ? (page.total === 1 ? 'match' : 'matches') : page.total === 1 ? 'result' : 'results';
  // Thousands separated, exact or not ("12,345", and a lower bound where the registry stopped counting: "10,000+").
  const number = (n: number) => n.toLocaleString('en-US');
  const count = page.totalExact === false ? `${number(page.total)}+` : number(page.total);
  if (folded || page.total <= page.results.length) return `${count} ${what}${folded ? ` in ${page.results.length} ${page.results.length === 1 ? 'entry' : 'entries'} on this page` : ''}`;
  if (pageNumber === undefined) return `${count} ${what}; ${page.results.length} on this later page`;
  const from = (pageNumber - 1) * PAGE_SIZE + 1;
  const to = from + page.results.length - 1;
  return `${number(from)}–${number(to)} of ${count} ${what}`;
}

/**
 * `reason`: the registry's why, when it knows it (a query of no word search looks for, a filter
 * key no entry can pass): said under the notice. Without it the page said only "Nothing
 * matches. Try fewer or other words." to `the` (fewer words find no more), and named no key of
 * a filter that leaves nothing.
 */
function EmptyResults({ params, reason }: { params: URLSearchParams; reason?: string | undefined }) {
  const filtered = FILTER_PARAMS.some((k) => params.get(k));
  // Searched with the registry's default health, which leaves out entries unhealthy for a while
  // (REGISTRY_HIDE_UNHEALTHY_SECONDS): what was looked for may be among them.
  const mayBeHidden = config.hidesUnhealthy && supports('health') && !params.get('health');
  return (
    <div class="notice">
      {filtered ? (
        <p>
          Nothing matches with these filters. <a href={searchUrl(params, Object.fromEntries(FILTER_PARAMS.map((k) => [k, undefined])))}>Clear the filters</a>.
        </p>
      ) : params.get('q')?.trim() ? (
        <p>{reason ? 'Nothing matches.' : 'Nothing matches. Try fewer or other words.'}</p>
      ) : mayBeHidden ? (
        <p>
          No entry is shown. <a href={href('/validate')}>Validate and register a card</a>.
        </p>
      ) : (
        <p>
          Nothing is registered yet. <a href={href('/validate')}>Validate and register a card</a>.
        </p>
      )}
      {/* The registry's words, which quote the query or a filter's value (from a link): isolated. */}
      {reason && (
        <p>
          <Foreign text={`${reason.charAt(0).toUpperCase()}${reason.slice(1)}.`} />
        </p>
      )}
      {mayBeHidden && (
        <p>
          Entries whose health checks have failed for a while are hidden from searches: <a href={searchUrl(params, { health: 'any' })}>search them too</a> (Health: Any,
          including hidden).
        </p>
      )}
    </div>
  );
}

function Filters({
  params,
  moved,
  setFilter,
  onControlFocused,
}: {
  params: URLSearchParams;
  moved: number;
  setFilter: (key: string, value: string | undefined) => void;
  /** The focus came into the filters: a control's first change adds a history entry. */
  onControlFocused: () => void;
}) {
  const [tags, setTags] = useState(params.get('tags') ?? '');
  useEffect(() => setTags(params.get('tags') ?? ''), [params.get('tags')]);
  // Tags typed and not yet committed belong to the history entry they were typed on (`moved` then).
  // Back or Forward moves the focus to the heading, the box blurs and says "change" against the
  // entry Back went to: committing then pushed a new entry mixing both, and lost Forward. The
  // text is left behind instead, as the search box's words within the typing pause are.
  const typedIn = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (typedIn.current === undefined) return;
    typedIn.current = undefined;
    setTags(params.get('tags') ?? '');
  }, [moved]);
  const commitTags = () => {
    if (typedIn.current !== moved) return;
    typedIn.current = undefined;
    const value = splitTags(tags).join(', ');
    if (value !== (params.get('tags') ?? '')) setFilter('tags', value || undefined);
  };
  const active = activeFilters(params).length;
  // A value about to leave the URL is not shown: a select given a value none of its options
  // has draws blank, and stays blank when that value leaves (its value reads "" either way).
  const ignored = ignoredFilters(params);
  const shown = (param: string) => (ignored.has(param) ? '' : (params.get(param) ?? ''));
  // The link's filters that apply and have no control here: each listed, to be seen and removed.
  const linked = LINK_FILTERS.filter((key) => params.get(key) && !ignored.has(key)).map((key) => [key, params.get(key)!] as const);
  const summary = useRef<HTMLElement>(null);
  // Open on a wide screen or with a filter set; then the person decides. Clearing the last
  // filter must not fold the panel away (and the focused control with it) on a phone.
  const [open, setOpen] = useState(() => active > 0 || window.matchMedia('(min-width: 48rem)').matches);
  useEffect(() => {
    if (active > 0) setOpen(true);
  }, [active > 0]);
  return (
    <details
      class="filters"
      open={open}
      onToggle={(e) => setOpen(e.currentTarget.open)}
      onFocusIn={onControlFocused}
      onKeyDown={(e) => {
        // Escape closes the open panel, as a keyboard user expects of a disclosure; the focus goes
        // to its summary first (the control it was on is hidden with the panel: lost to the page's top).
        if (e.key !== 'Escape' || e.isComposing || !open) return;
        e.preventDefault();
        summary.current?.focus();
        setOpen(false);
      }}
    >
      <summary ref={summary}>Filters{active > 0 ? ` (${active})` : ''}</summary>
      <div class="filter-grid">
        {SELECTS.filter((f) => supports(f.filterKey)).map((f) => (
          <div class="field">
            <label for={`f-${f.param}`}>{f.label}</label>
            <select id={`f-${f.param}`} value={shown(f.param)} onChange={(e) => setFilter(f.param, e.currentTarget.value || undefined)}>
              {withLinked(f, shown(f.param)).map(([value, label]) => (
                <option value={value}>{label}</option>
              ))}
            </select>
          </div>
        ))}
        {supports('tags') && (
          <div class="field">
            <label for="f-tags">Skill tags</label>
            <input
              id="f-tags"
              type="text"
              dir="auto"
              value={tags}
              placeholder="finance, translation"
              aria-describedby="f-tags-help"
              onInput={(e) => {
                typedIn.current = moved;
                setTags(e.currentTarget.value);
              }}
              onChange={commitTags}
              onKeyDown={(e) => {
                if (e.key === 'Enter') {
                  e.preventDefault();
                  commitTags();
                }
              }}
            />
            <small id="f-tags-help">Comma-separated; a skill with any of them matches.</small>
          </div>
        )}
        {supports('verified') && (
          <div class="field checkbox">
            <input
              id="f-verified"
              type="checkbox"
              checked={params.get('verified') === 'true'}
              onChange={(e) => setFilter('verified', e.currentTarget.checked ? 'true' : undefined)}
            />
            <label for="f-verified">Verified signatures only</label>
          </div>
        )}
      </div>
      {linked.length > 0 && (
        <div class="link-filters">
          <p id="f-linked">Also from the link:</p>
          <ul aria-labelledby="f-linked">
            {linked.map(([key, value]) => (
              <li>
                <code class="url">
                  {key}=<Foreign text={clipped(value, 60)} />
                </code>{' '}
                <button
                  type="button"
                  class="small secondary"
                  aria-label={`Remove the filter ${key}`}
                  onClick={() => {
                    // The button goes with the filter: the focus waits on the panel's summary, not lost to the page's top.
                    summary.current?.focus();
                    setFilter(key, undefined);
                  }}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
    </details>
  );
}

const MATCH_LABEL: Record<SearchMatch['type'], string> = { skill: 'Skill', tool: 'Tool', agent: 'Agent', 'mcp-server': 'Server' };

function Hit({ hit, terms, showMatch }: { hit: SearchHit; terms: string[]; showMatch: boolean }) {
  const inner = hit.match.type === 'skill' || hit.match.type === 'tool';
  // Other skills or tools that matched (the entry's own text is already shown).
  const others = (hit.matches ?? []).filter((m) => (m.type === 'skill' || m.type === 'tool') && !(m.type === hit.match.type && m.id === hit.match.id));
  const first = hit.interfaces[0];
  return (
    <li class="hit">
      <div class="hit-head">
        <h2 dir="auto">
          {/* With what it matched: the entry shows those skills or tools among the first, however it is opened.
              The search's URL goes with it as the referrer, to this registry only: a new tab's way back (last-search). */}
          <a href={entryLink(hit)} referrerpolicy="same-origin">
            <Highlight text={hit.name} terms={terms} />
          </a>
        </h2>
        <span class={`badge kind-${hit.kind}`}>{KIND_LABEL[hit.kind]}</span>
        <StatusBadges status={hit} />
      </div>
      <p class="hit-description" dir="auto">
        <Highlight text={hit.description} terms={terms} />
      </p>
      {showMatch && (
        <p class="hit-match">
          {inner ? (
            <>
              Matched {MATCH_LABEL[hit.match.type].toLowerCase()}{' '}
              <strong dir="auto">
                <Highlight text={hit.match.name} terms={terms} />
              </strong>
            </>
          ) : (
            <>Matched the {hit.kind === 'agent' ? 'agent' : 'server'} itself</>
          )}
          {hit.match.fields.length > 0 && <span class="muted"> in {hit.match.fields.join(', ')}</span>}
          {others.length > 0 && (
            <>
              {'; also '}
              {others.map((m, i) => (
                <>
                  {i > 0 && ', '}
                  {MATCH_LABEL[m.type].toLowerCase()}{' '}
                  <bdi>
                    <Highlight text={m.name} terms={terms} />
                  </bdi>
                </>
              ))}
            </>
          )}
          {/* In words: "(+4 more)" was read aloud "plus 4 more". */}
          {hit.moreInEntry ? <span class="muted">{others.length > 0 ? ' and ' : '; also '}{hit.moreInEntry.toLocaleString('en-US')} more</span> : null}
        </p>
      )}
      {first && (
        <p class="hit-interface">
          <span class="badge subtle">
            {first.protocolBinding}
            {first.protocolVersion ? ` ${first.protocolVersion}` : ''}
          </span>{' '}
          <span class="mono">{first.url}</span>
          {hit.interfaces.length > 1 && <MoreInterfaces count={hit.interfaces.length - 1} />}
        </p>
      )}
    </li>
  );
}

/**
 * How many interfaces a hit has beyond the one shown: "+3" to the eye, "3 more interfaces" to a
 * screen reader (which read the bare "+3" as "plus 3", naming nothing).
 */
function MoreInterfaces({ count }: { count: number }) {
  return (
    <span class="muted">
      {' '}
      <span aria-hidden="true">+{count}</span>
      <span class="visually-hidden">{count === 1 ? '1 more interface' : `${count} more interfaces`}</span>
    </span>
  );
}
