/**
 * The HTML every page of the web interface starts from: the header and footer (plain links,
 * usable without scripts), <main> where the client renders, and the page's configuration in a
 * <meta> tag, so that no inline script is needed under the page's content security policy.
 * Until the page's script runs (seconds on a slow connection), <main> says it is loading, and
 * after a while what to do if it never comes (the stylesheet shows that note late). The note
 * names both causes a page can tell nothing of: a connection that fails, and the address's
 * request limit (REGISTRY_RATE_REQUESTS_PER_MINUTE) refusing the page's files after the page
 * itself was let through. A script's error event carries no status, and no inline script may
 * ask (the page's CSP). The files stay counted: served without limit, they would be the way
 * to make the registry send bytes without end.
 */
import type { WebManifest } from './assets.js';
import type { PageConfig } from './page-config.js';

export type { PageConfig };

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

export function pageShell(manifest: WebManifest, config: PageConfig, description: string): string {
  const asset = (file: string) => escapeHtml(`${config.base}/assets/${file}`);
  const link = (path: string) => escapeHtml(`${config.base}${path}`);
  const name = escapeHtml(config.name);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${name}</title>
<meta name="description" content="${escapeHtml(description)}">
<meta name="registry-config" content="${escapeHtml(JSON.stringify(config))}">
<link rel="icon" href="${asset(manifest.icon)}" type="image/svg+xml">
<link rel="stylesheet" href="${asset(manifest.style)}">
${manifest.preload.map((file) => `<link rel="modulepreload" href="${asset(file)}">\n`).join('')}<script type="module" src="${asset(manifest.script)}"></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
<div class="inner">
<a class="brand" href="${link('/')}"><img src="${asset(manifest.icon)}" alt="" width="28" height="28"><span>${name}</span></a>
<nav class="site-nav" aria-label="Main">
<ul>
<li><a href="${link('/')}" data-nav="search">Search</a></li>
<li><a href="${link('/validate')}" data-nav="validate">Validate &amp; register</a></li>
<li><a href="${link('/.well-known/agent-card.json')}" data-reload>Agent card</a></li>
</ul>
</nav>
</div>
</header>
<main id="main" tabindex="-1">
<p class="page-loading" role="status">Loading…<span class="page-slow"> Still loading: check your connection, then reload the page. If this address has sent the registry more requests in the last minute than it takes (an office or a proxy shares one), the page's files were refused: reload it in a minute.</span></p>
<noscript><p>This page needs JavaScript. Programs talk to the registry over A2A: its card is at <a href="${link('/.well-known/agent-card.json')}">/.well-known/agent-card.json</a>.</p></noscript>
</main>
<footer class="site-footer">
<div class="inner">
<p>${name} is an A2A agent: agents find it through its <a href="${link('/.well-known/agent-card.json')}">agent card</a> and talk to it over A2A JSON-RPC (<code>${link('/a2a/jsonrpc')}</code>) or HTTP+JSON (<code>${link('/a2a/rest')}</code>). This page uses the same endpoints.</p>
</div>
</footer>
</body>
</html>
`;
}

/**
 * The page a browser gets when the address's request budget (REGISTRY_RATE_REQUESTS_PER_MINUTE)
 * refuses the page itself: what was limited and when to reload, not the JSON an API client
 * reads. Plain HTML: the page's code is refused as well, and nothing here needs it.
 */
export function rateLimitedPage(name: string, perMinute: number, retryAfterSeconds: number): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Too many requests · ${escapeHtml(name)}</title></head>
<body>
<main>
<h1>Too many requests</h1>
<p>${escapeHtml(name)} takes at most ${perMinute.toLocaleString('en-US')} requests a minute from one address, and this address has sent more: pages and their files, searches, entries, checks and registrations count together.</p>
<p>Reload this page in ${retryAfterSeconds} s.</p>
<p>Everyone behind the same address (an office, a proxy) shares the limit. If it keeps happening, tell the registry's operator.</p>
</main>
</body>
</html>
`;
}

/**
 * The page a browser gets while the registry starts (its storage opening: a migration, a
 * PostgreSQL replica waiting for another's): said so, and when to reload, not the JSON refusal
 * an API client reads. The registry's name is not known yet (the card waits for the doors).
 */
export function startingUpPage(retryAfterSeconds: number): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Starting up · A2A Agent Registry</title></head>
<body>
<main>
<h1>The registry is starting up</h1>
<p>It is opening its storage (after an upgrade this can take a while). Nothing registered is lost.</p>
<p>Reload this page in ${retryAfterSeconds} s.</p>
</main>
</body>
</html>
`;
}

/**
 * What a browser gets when the page's assets were not built (running from source without `npm run build`).
 * `base`: PUBLIC_URL's path (PageConfig.base), as every link of the built page has it: behind a
 * proxy that serves the registry under a path, a link from the root leads out of it.
 */
export function notBuiltPage(name: string, base: string): string {
  const card = escapeHtml(`${base}/.well-known/agent-card.json`);
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(name)}</title></head>
<body>
<main>
<h1>${escapeHtml(name)}</h1>
<p>The web page of this registry is not built. Run <code>npm run build</code>, then start the registry again.</p>
<p>The A2A endpoints work meanwhile: the agent card is at <a href="${card}">${card}</a>.</p>
</main>
</body>
</html>
`;
}
