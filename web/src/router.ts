/**
 * A small history router for three pages. The server answers the same page for each path
 * (src/web), so links work with or without it; with it, following a link does not reload the
 * page. Search state lives in the URL's query, so a search can be shared and Back works.
 */
import { useEffect, useState } from 'preact/hooks';
import { config } from './config';

export type Route =
  | { page: 'search'; params: URLSearchParams }
  | { page: 'entry'; id: string; params: URLSearchParams }
  | { page: 'validate'; params: URLSearchParams }
  | { page: 'not-found'; params: URLSearchParams };

export function parseLocation(loc: Location = window.location): Route {
  const params = new URLSearchParams(loc.search);
  let path = loc.pathname;
  if (config.base && path.startsWith(config.base)) path = path.slice(config.base.length) || '/';
  if (path === '/' || path === '') return { page: 'search', params };
  // The server answers the page for /validate/ too (its routes ignore a trailing slash).
  if (path === '/validate' || path === '/validate/') return { page: 'validate', params };
  const entry = /^\/entries\/([^/]+)\/?$/.exec(path);
  if (entry) {
    try {
      return { page: 'entry', id: decodeURIComponent(entry[1]!), params };
    } catch {
      // Not valid percent-encoding (/entries/%ff): no entry can have that id.
      return { page: 'not-found', params };
    }
  }
  return { page: 'not-found', params };
}

const CHANGE = 'registry:navigate';

export interface NavigateOptions {
  /** Edit the current history entry instead of adding one (typing in the search box). */
  replace?: boolean;
  /** The person stays where they are (a filter, a comparison): focus and scrolling are left alone. */
  inPlace?: boolean;
}

/** Where the person was on a page they left: Back returns them there (see leftPlace). */
interface Place {
  scrollY: number;
  /** The href of the link they followed (focused when they clicked it or pressed Enter on it). */
  link: string | null;
}

/** Goes to a URL of this page. */
export function navigate(url: string, options: NavigateOptions = {}): void {
  if (options.replace) history.replaceState(null, '', url);
  else {
    const active = document.activeElement;
    const place: Place = { scrollY: window.scrollY, link: active instanceof HTMLAnchorElement ? active.getAttribute('href') : null };
    history.replaceState(place, '');
    history.pushState(null, '', url);
  }
  const inPlace = options.replace === true || options.inPlace === true;
  if (!inPlace) window.scrollTo(0, 0);
  window.dispatchEvent(new CustomEvent(CHANGE, { detail: { inPlace } }));
}

/**
 * Where the person was when they left the page now shown (they came Back to it, or reloaded),
 * or undefined. A page whose content arrives later restores it once that content is drawn:
 * the browser's own restoration runs before, on a page still empty.
 */
export function leftPlace(): Place | undefined {
  const state: unknown = history.state;
  if (typeof state !== 'object' || state === null) return undefined;
  const { scrollY, link } = state as Partial<Place>;
  return typeof scrollY === 'number' ? { scrollY, link: typeof link === 'string' ? link : null } : undefined;
}

/**
 * The current route, re-rendered on every navigation. `moved` counts navigations to a new page
 * (links, Back): pages move focus to their heading when it changes, not while typing or filtering.
 */
export function useRoute(): { route: Route; moved: number } {
  const [state, setState] = useState({ route: parseLocation(), moved: 0 });
  const [drawn] = useState(() => window.location.pathname + window.location.search);
  useEffect(() => {
    let shown = drawn;
    const onChange = (event: Event) => {
      const now = window.location.pathname + window.location.search;
      // A jump within the page (the skip link, #history) is no navigation.
      if (event.type === 'popstate' && now === shown) return;
      shown = now;
      const inPlace = event instanceof CustomEvent && (event.detail as { inPlace?: boolean } | null)?.inPlace === true;
      setState((s) => ({ route: parseLocation(), moved: inPlace ? s.moved : s.moved + 1 }));
    };
    window.addEventListener('popstate', onChange);
    window.addEventListener(CHANGE, onChange);
    // A page's effects run before this one on the first render: a URL one of them replaced
    // meanwhile (the search page leaving out a link's filters that cannot apply) is drawn now.
    if (window.location.pathname + window.location.search !== shown) onChange(new CustomEvent(CHANGE, { detail: { inPlace: true } }));
    return () => {
      window.removeEventListener('popstate', onChange);
      window.removeEventListener(CHANGE, onChange);
    };
  }, []);
  return state;
}

/** Follows same-page links without a reload (plain clicks only: new tabs, downloads etc. behave as usual). */
export function interceptLinks(root: HTMLElement | Document = document): void {
  root.addEventListener('click', (event) => {
    const e = event as MouseEvent;
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download') || a.dataset.reload !== undefined) return;
    const url = new URL(a.href, window.location.href);
    if (url.origin !== window.location.origin) return;
    const probe = { pathname: url.pathname, search: url.search } as Location;
    if (parseLocation(probe).page === 'not-found') return;
    if (url.pathname === window.location.pathname && url.search === window.location.search && url.hash) return;
    e.preventDefault();
    navigate(url.pathname + url.search + url.hash);
  });
}
