/**
 * The web page in a real browser (Debian's Chromium driven by playwright-core) against a real
 * registry on 127.0.0.1: search as you type, filters, paging, an entry's page, comparing
 * revisions, the keyboard, phone width and how text of every kind is laid out. Each test can save
 * a screenshot under test-output/screenshots. Plus the HTTP side: content negotiation at the
 * page's paths, the page's content security policy, the assets and their size.
 *
 * One registry and one browser for the whole file (test/support/web-page.ts); the page's assets
 * are built first, so the test runs against the current sources. Validating, registering and
 * what the page says when things go wrong are in web-forms.test.ts: two files, so that the two
 * run side by side.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { FIRST_PAGE_BUDGET_BYTES, type WebBuildResult } from '../web/build.js';
import { cardAnchors } from '../web/src/card-anchor.js';
import { PAGE_CONTENT_SECURITY_POLICY } from '../src/http/security.js';
import { notBuiltPage } from '../src/web/page-shell.js';
import { browserUnavailable, screenshot, type TestBrowser, type WatchedPage } from './support/browser.js';
import { op, registerByUrl, resultOf, sdkClient, send, type WireJson } from './support/client.js';
import { mcpServer, toolspec, v1Card } from './support/documents.js';
import { serveCard } from './support/freshness.js';
import { waitFor, type OriginServer } from './support/origin-server.js';
import { startTestRegistry, TOKENS, type TestRegistry } from './support/registry.js';
import {
  assertAccessible,
  BROWSER_ACCEPT,
  expectHits,
  FILLERS,
  releaseTimers,
  holdTimers,
  retirePage,
  startWebFixture,
  TYPING_PAUSE_MS,
  withPage as pageOf,
  type WebFixture,
} from './support/web-page.js';

const unavailable = browserUnavailable();

/** WCAG's contrast ratio of two CSS colours as computed (`rgb(…)`; a box-shadow's colour is its first). */
function contrast(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r, g, bl] = (/rgba?\((\d+), (\d+), (\d+)/.exec(color) ?? assert.fail(`not a colour: ${color}`)).slice(1).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

describe('web page', { skip: unavailable }, () => {
  let fixture: WebFixture | undefined;
  let registry: TestRegistry;
  let browser: TestBrowser;
  let build: WebBuildResult;
  let origin: OriginServer;
  let ids: Record<string, string>;

  before(async () => {
    fixture = await startWebFixture();
    ({ registry, browser, build, origin, ids } = fixture);
  });

  after(async () => {
    await fixture?.close();
  });

  /** A page as new (one page, put back between tests: see withPage in support/web-page.ts); at the end of the test nothing went wrong in it (console errors, exceptions, CSP refusals). */
  const withPage = <T>(fn: (page: WatchedPage) => Promise<T>): Promise<T> => pageOf(browser, fn);


  describe('over HTTP', () => {
    test('browsers get the page at /, /entries/{id} and /validate; API clients keep their JSON answers', async () => {
      for (const path of ['/', `/entries/${ids.invoice}`, '/validate', '/?q=invoice&kind=agent']) {
        const res = await fetch(`${registry.url}${path}`, { headers: { accept: BROWSER_ACCEPT } });
        assert.equal(res.status, 200, path);
        assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
        assert.equal(res.headers.get('content-security-policy'), PAGE_CONTENT_SECURITY_POLICY);
        assert.match(res.headers.get('vary') ?? '', /Accept/);
        assert.equal(res.headers.get('x-frame-options'), 'DENY');
        const html = await res.text();
        assert.match(html, new RegExp(`<script type="module" src="/assets/${build.manifest.script}"></script>`));
        assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)/, 'no inline script');
        assert.doesNotMatch(html, /\bstyle=|<style/, 'no inline style');
        assert.doesNotMatch(html, /https?:\/\/(?!127\.0\.0\.1)/, 'no other origin');
      }
      // The page served when dist/web is missing links the agent card under PUBLIC_URL's path, as
      // the built page does (it linked the root). Called directly: serving it takes a registry
      // started without the build, which every test here shares.
      assert.match(notBuiltPage('Registry', '/registry'), /<a href="\/registry\/\.well-known\/agent-card\.json">/);
      assert.match(notBuiltPage('Registry', ''), /<a href="\/\.well-known\/agent-card\.json">/);
      const head = await fetch(`${registry.url}/`, { method: 'HEAD', headers: { accept: BROWSER_ACCEPT } });
      assert.equal(head.status, 200);
      assert.equal(await head.text(), '');

      // What / answered before the page existed, for every client that does not prefer HTML.
      for (const accept of ['application/json', '*/*', undefined]) {
        const res = await fetch(`${registry.url}/`, { headers: accept ? { accept } : {} });
        assert.equal(res.status, 404, `Accept: ${accept}`);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        assert.equal(res.headers.get('content-security-policy'), "default-src 'none';frame-ancestors 'none'");
        assert.equal(((await res.json()) as WireJson).error.status, 'NOT_FOUND');
      }
      // A path with no page: browsers get the page (which says so) with status 404; API clients, other methods and other routes' paths keep their JSON.
      // Page paths are matched case-sensitively, as the page's router matches them: /VALIDATE was 200, and the page said "Page not found".
      for (const path of ['/nonsense', '/entries/x/y', '/entries/', '/entries/%ff', '/VALIDATE', '/Validate', `/ENTRIES/${ids.invoice}`]) {
        const res = await fetch(`${registry.url}${path}`, { headers: { accept: BROWSER_ACCEPT } });
        assert.equal(res.status, 404, path);
        assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8', path);
        assert.equal(res.headers.get('content-security-policy'), PAGE_CONTENT_SECURITY_POLICY);
        assert.match(res.headers.get('vary') ?? '', /Accept/);
        assert.equal(res.headers.get('etag'), null, 'a 404 carries no validator');
        assert.match(await res.text(), new RegExp(`<script type="module" src="/assets/${build.manifest.script}"></script>`));
        const api = await fetch(`${registry.url}${path}`, { headers: { accept: 'application/json' } });
        assert.match(api.headers.get('vary') ?? '', /Accept/);
        // Not valid percent-encoding: for API clients a bad request, as on every other path.
        const [status, code] = path === '/entries/%ff' ? [400, 'INVALID_ARGUMENT'] : [404, 'NOT_FOUND'];
        assert.equal(api.status, status);
        const { error } = (await api.json()) as WireJson;
        assert.equal(error.status, code);
        // In the words of the path: the entry id (it was "e.g. a task id"), and where an entry is for a client that is no browser.
        if (path === '/entries/%ff') assert.match(error.message, /^The entry id in the path, "%ff", is not valid percent-encoded UTF-8: percent-encode it once/);
        if (path === '/entries/x/y') assert.match(error.message, /^No route GET \/entries\/x\/y\. \/entries\/\{id\} is an entry's web page, for browsers/);
      }
      for (const [method, path, status] of [
        ['POST', '/nonsense', 404],
        ['GET', '/search', 405],
      ] as const) {
        const res = await fetch(`${registry.url}${path}`, { method, headers: { accept: BROWSER_ACCEPT } });
        assert.equal(res.status, status, `${method} ${path}`);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `${method} ${path}`);
        await res.arrayBuffer();
      }
      const card = await fetch(`${registry.url}/.well-known/agent-card.json`, { headers: { accept: BROWSER_ACCEPT } });
      assert.equal(card.status, 200);
      assert.match(card.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(card.headers.get('content-security-policy'), "default-src 'none';frame-ancestors 'none'");
      const rest = await fetch(`${registry.url}/a2a/rest/tasks/nope`, { headers: { accept: BROWSER_ACCEPT, 'A2A-Version': '1.0' } });
      assert.match(rest.headers.get('content-type') ?? '', /json/);
    });

    test('the page and its assets: each content coding (br, gzip, identity) its own ETag, each revalidated on its own', async () => {
      const html = { accept: BROWSER_ACCEPT };
      for (const [path, headers] of [['/', html], ['/validate', html], [`/assets/${build.manifest.script}`, {}], [`/assets/${build.manifest.style}`, {}]] as const) {
        // undici's request: fetch sends an Accept-Encoding of its own and unpacks what it is sent.
        const sent = async (encoding: string, extra: Record<string, string> = {}) => {
          const res = await request(`${registry.url}${path}`, { headers: { ...headers, 'accept-encoding': encoding, ...extra } });
          const body = Buffer.from(await res.body.arrayBuffer());
          return { status: res.statusCode, etag: String(res.headers.etag), coding: res.headers['content-encoding'], body };
        };
        const forms = { br: await sent('br'), gzip: await sent('gzip'), identity: await sent('identity') };
        assert.deepEqual([forms.br.coding, forms.gzip.coding, forms.identity.coding], ['br', 'gzip', undefined], path);
        // One strong ETag for three representations (RFC 9110 8.8.3) was served for each.
        assert.equal(new Set([forms.br.etag, forms.gzip.etag, forms.identity.etag]).size, 3, `${path}: ${JSON.stringify([forms.br.etag, forms.gzip.etag, forms.identity.etag])}`);
        for (const [encoding, form] of Object.entries(forms)) {
          assert.match(form.etag, /^"[\w-]+"$/, `${path} ${encoding}: a strong validator`);
          // The form the client has: 304. Another coding's ETag, from the same client: the form it asks for, whole.
          const same = await sent(encoding, { 'if-none-match': form.etag });
          assert.deepEqual([same.status, same.etag, same.body.length], [304, form.etag, 0], `${path} ${encoding}: revalidated`);
          const other = encoding === 'br' ? forms.gzip : forms.br;
          const changed = await sent(encoding, { 'if-none-match': other.etag });
          assert.equal(changed.status, 200, `${path} ${encoding} with another coding's ETag`);
          assert.deepEqual([changed.etag, changed.body], [form.etag, form.body], `${path} ${encoding}: that coding's form`);
        }
        // Where the client's weights tie, brotli (the smallest): browsers list gzip first, and
        // followed in their order never got brotli. Weights the client gives decide.
        for (const [encoding, form] of [
          ['gzip, deflate, br, zstd', forms.br],
          ['gzip, br', forms.br],
          ['*', forms.br],
          ['gzip;q=0.8', forms.gzip],
          ['br;q=0, gzip;q=1', forms.gzip],
          ['gzip;q=1, br;q=0.5', forms.gzip],
          ['identity, gzip;q=0.5, br;q=0.5', forms.identity],
          ['br;q=0, gzip;q=0', forms.identity],
          ['deflate', forms.identity],
        ] as const) {
          const res = await request(`${registry.url}${path}`, { headers: { ...headers, 'accept-encoding': encoding } });
          const body = Buffer.from(await res.body.arrayBuffer());
          assert.deepEqual([res.headers['content-encoding'], String(res.headers.etag)], [form.coding, form.etag], `${path} for Accept-Encoding: ${encoding}`);
          assert.deepEqual(body, form.body, `${path} for Accept-Encoding: ${encoding}`);
          assert.match(String(res.headers.vary), /Accept-Encoding/, `${path}: Vary`);
        }
      }
    });

    test('a page on another origin (a browser-based agent) reads the AI Catalog with a conditional GET: its preflight passes', async () => {
      // The origin server is another origin (another port): a request with If-None-Match or
      // Cache-Control is preflighted, and the preflight was answered without CORS headers.
      origin.route('/agent-page', (_req, res) => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>agent</title><link rel="icon" href="data:,">'));
      await withPage(async (page) => {
        await page.goto(`${origin.url}/agent-page`);
        const seen = await page.evaluate(async (url) => {
          const first = await fetch(url, { cache: 'no-store' });
          await first.text();
          const etag = first.headers.get('etag') ?? '';
          const revalidated = await fetch(url, { cache: 'no-store', headers: { 'If-None-Match': etag } });
          const reloaded = await fetch(url, { cache: 'no-store', headers: { 'Cache-Control': 'no-cache', 'A2A-Version': '1.0' } });
          return { etag, revalidated: revalidated.status, reloaded: reloaded.status, catalog: ((await reloaded.json()) as { specVersion?: string }).specVersion };
        }, `${registry.url}/.well-known/ai-catalog.json`);
        assert.match(seen.etag, /^"/, 'the ETag is exposed');
        assert.deepEqual({ revalidated: seen.revalidated, reloaded: seen.reloaded, catalog: seen.catalog }, { revalidated: 304, reloaded: 200, catalog: '1.0' });
      });
    });

    test('assets: hashed, immutable, compressed (by the build, not at each start), revalidated; the first page is under its budget', async (t) => {
      for (const file of build.manifest.files) {
        const res = await fetch(`${registry.url}/assets/${file}`, { headers: { 'accept-encoding': 'identity' } });
        assert.equal(res.status, 200, file);
        assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
        assert.equal(res.headers.get('content-encoding'), null);
        const etag = res.headers.get('etag')!;
        const body = Buffer.from(await res.arrayBuffer());
        const again = await fetch(`${registry.url}/assets/${file}`, { headers: { 'if-none-match': etag, 'accept-encoding': 'identity' } });
        assert.equal(again.status, 304);
        // Each compressed form is the one the build wrote beside the file, and unpacks to the file.
        for (const [encoding, suffix, unpack] of [['br', '.br', brotliDecompressSync], ['gzip', '.gz', gunzipSync]] as const) {
          // undici's request, not fetch: fetch unpacks what it is sent.
          const sent = await request(`${registry.url}/assets/${file}`, { headers: { 'accept-encoding': encoding } });
          const bytes = Buffer.from(await sent.body.arrayBuffer());
          const written = path.join(build.outDir, 'assets', file + suffix);
          if (sent.headers['content-encoding'] === undefined) {
            assert.ok(file.endsWith('.svg') || body.length < 512, `${file} is sent uncompressed to ${encoding}`);
            continue;
          }
          assert.deepEqual(bytes, fs.readFileSync(written), `${file} as ${encoding} is ${path.basename(written)}`);
          assert.deepEqual(unpack(bytes), body, `${file} as ${encoding} unpacks to the file`);
        }
      }
      const script = `${registry.url}/assets/${build.manifest.script}`;
      const br = await fetch(script, { headers: { 'accept-encoding': 'br' }, decompress: false } as RequestInit);
      assert.equal(br.headers.get('content-encoding'), 'br');
      assert.equal(br.headers.get('content-type'), 'text/javascript; charset=utf-8');
      assert.equal(br.headers.get('vary'), 'Accept-Encoding');
      const gzip = await fetch(script, { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit);
      assert.equal(gzip.headers.get('content-encoding'), 'gzip');
      const missing = await fetch(`${registry.url}/assets/nope.js`);
      assert.equal(missing.status, 404);
      assert.match(missing.headers.get('content-type') ?? '', /json/);
      // An asset asked with another method is 405 with Allow, as any route's path (it was 404, as a file that does not exist).
      const posted = await fetch(script, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      assert.deepEqual([posted.status, posted.headers.get('allow')], [405, 'GET, HEAD']);
      assert.match(((await posted.json()) as { error: { message: string } }).error.message, /^POST is not allowed on \/assets\/.*: it takes GET\.$/);
      // If-Match naming another version: 412 (JSON), never the asset.
      const stale = await fetch(script, { headers: { 'if-match': '"an-older-build"', 'accept-encoding': 'identity' } });
      assert.deepEqual([stale.status, stale.headers.get('content-type')], [412, 'application/json; charset=utf-8']);
      assert.match(((await stale.json()) as { error: { message: string } }).error.message, /is no longer the one If-Match names/);
      const current = await fetch(script, { headers: { 'accept-encoding': 'identity' } });
      await current.arrayBuffer();
      assert.equal((await fetch(script, { headers: { 'if-match': current.headers.get('etag')!, 'accept-encoding': 'identity' } })).status, 200);
      const options = await fetch(script, { method: 'OPTIONS' });
      assert.deepEqual([options.status, options.headers.get('allow'), await options.text()], [200, 'GET, HEAD', 'GET, HEAD']);

      // What a browser downloads for the search page, as served (uncompressed, and as sent with gzip/br).
      const first = [build.manifest.script, ...build.manifest.preload, build.manifest.style, build.manifest.icon];
      let bytes = 0;
      let sent = 0;
      for (const file of first) {
        bytes += (await (await fetch(`${registry.url}/assets/${file}`, { headers: { 'accept-encoding': 'identity' } })).arrayBuffer()).byteLength;
        const res = await fetch(`${registry.url}/assets/${file}`, { headers: { 'accept-encoding': 'br, gzip' } });
        sent += Number(res.headers.get('content-length'));
        await res.arrayBuffer();
      }
      const html = (await (await fetch(`${registry.url}/`, { headers: { accept: BROWSER_ACCEPT, 'accept-encoding': 'identity' } })).arrayBuffer()).byteLength;
      t.diagnostic(`first page: ${bytes} bytes of assets (${sent} bytes sent compressed) + ${html} bytes of HTML`);
      assert.ok(bytes + html < FIRST_PAGE_BUDGET_BYTES, `first page ${bytes + html} bytes >= ${FIRST_PAGE_BUDGET_BYTES}`);
    });
  });

  test('search: results as you type (debounced), the words marked, the query in the URL', async () => {
    await withPage(async (page) => {
      const searches: string[] = [];
      page.on('request', (r) => {
        if (r.url().endsWith('/a2a/rest/message:send')) searches.push(r.postData() ?? '');
      });
      await page.goto(`${registry.url}/`);
      await page.locator('.hit').first().waitFor();
      const before = searches.length;
      // When each key reached the page: on a busy machine two keys sent 40 ms apart can arrive
      // a typing pause (250 ms) apart, and then a search between them is right, not a defect.
      await page.evaluate(() => {
        const times: number[] = [];
        (window as unknown as { keyTimes: number[] }).keyTimes = times;
        document.addEventListener('input', () => times.push(performance.now()), true);
      });
      await page.locator('#q').pressSequentially('invoice', { delay: 40 });
      await page.waitForURL(/\?q=invoice$/);
      await page.locator('.hit', { hasText: 'Invoice Agent' }).waitFor();
      const keyTimes = await page.evaluate(() => (window as unknown as { keyTimes: number[] }).keyTimes);
      const pauses = keyTimes.slice(1).filter((at, i) => at - keyTimes[i] >= 150).length;
      const sent = searches.length - before;
      assert.ok(sent <= 2 + pauses, `typing 7 characters sent ${sent} searches (keys ${keyTimes.map((at) => Math.round(at - keyTimes[0])).join(', ')} ms)`);
      assert.equal(await page.locator('#q').inputValue(), 'invoice');
      // Every request went to the A2A door with the protocol version, as any A2A client's would.
      assert.ok(searches.every((body) => JSON.parse(body).message.parts[0].data.search));

      const hit = page.locator('.hit', { hasText: 'Invoice Agent' });
      assert.deepEqual(await hit.locator('h2 mark').allTextContents(), ['Invoice']);
      assert.match((await hit.locator('.hit-match').textContent()) ?? '', /skill Translate invoice/i);
      assert.ok((await hit.locator('.hit-match mark').allTextContents()).includes('invoice'));
      assert.equal(await page.locator('.hit').count(), 1, 'one result per entry');
      assert.match((await page.locator('#result-count').textContent()) ?? '', /match|result/);
      await screenshot(page, 'search');

      // A key pressed just as the pause writes the words to the URL, before the page is drawn
      // again (a busy machine): it stays in the box, and the URL follows it.
      await page.locator('#q').fill('');
      await page.waitForURL((url) => url.search === '');
      await page.evaluate(() => {
        const realSet = window.setTimeout.bind(window);
        let once = true;
        window.setTimeout = ((fn: () => void, ms?: number) =>
          realSet(() => {
            fn();
            // The typing pause (250 ms) has just written the URL: the next key arrives at once.
            if (ms === 250 && once) {
              once = false;
              const box = document.querySelector<HTMLInputElement>('#q')!;
              box.value += 'n';
              box.dispatchEvent(new Event('input', { bubbles: true }));
            }
          }, ms)) as typeof window.setTimeout;
      });
      await page.locator('#q').pressSequentially('i');
      await page.waitForURL(/\?q=in$/, { timeout: 5000 });
      assert.equal(await page.locator('#q').inputValue(), 'in');

      // The URL is the search: opening it again shows the same.
      await page.goto(`${registry.url}/?q=weather`);
      await page.locator('.hit', { hasText: 'Weather Agent' }).waitFor();
      assert.equal(await page.locator('#q').inputValue(), 'weather');
      await assertAccessible(page, 'the search page');

      // Words longer than the registry searches (REGISTRY_MAX_QUERY_CHARS, 1,000 by default): said
      // in words, not as the registry's refusal naming its wire request.
      await page.locator('#q').fill(`weather ${'w'.repeat(1000)}`);
      const refusal = page.locator('[role=alert]', { hasText: 'The search words are 1,008 characters; this registry searches at most 1,000. Shorten them.' });
      await refusal.waitFor();
      assert.doesNotMatch((await refusal.textContent()) ?? '', /parts|data\/search/);
      assert.equal(await page.locator('#q').inputValue(), `weather ${'w'.repeat(1000)}`, 'the words stay, to be shortened');
      // The refusal is the box's error: the box is invalid and described by it, heard on the box.
      const box = page.locator('#q');
      assert.equal(await box.getAttribute('aria-invalid'), 'true');
      assert.deepEqual((await box.getAttribute('aria-describedby'))?.split(' '), ['result-count', await refusal.getAttribute('id')]);
      await page.locator('#q').fill('weather');
      await page.locator('.hit', { hasText: 'Weather Agent' }).waitFor();
      assert.equal(await refusal.count(), 0);
      assert.equal(await box.getAttribute('aria-invalid'), null);
      assert.equal(await box.getAttribute('aria-describedby'), 'result-count');

      // Other words answered with a count that reads as the last one did: the count is added to
      // its live region anew (a live region says what is added), so a screen reader says this
      // answer too; an unchanged text would have been kept silent.
      const lastCount = await page.locator('#result-count').textContent();
      await page.evaluate(() => {
        const added: string[] = [];
        Object.assign(window, { countsAdded: added });
        new MutationObserver((records) => records.forEach((r) => r.addedNodes.forEach((n) => added.push(n.textContent ?? '')))).observe(document.querySelector('#result-count')!, { childList: true, subtree: true });
      });
      await page.locator('#q').fill('ledger');
      await page.locator('.hit', { hasText: 'Ledger Agent' }).waitFor();
      assert.equal(await page.locator('#result-count').textContent(), lastCount, 'the same count, or this checks nothing');
      assert.deepEqual(await page.evaluate(() => (window as unknown as { countsAdded: string[] }).countsAdded), [lastCount]);
      await page.locator('#q').fill('weather');
      await page.locator('.hit', { hasText: 'Weather Agent' }).waitFor();

      // A slow answer (held back until the test has looked; a second of network latency was
      // not always enough on a loaded machine): the results still shown are the last search's,
      // and the page says so instead of passing them off as the answer to the words now in the box.
      let answerComes = () => {};
      const answerHeld = new Promise<void>((resolve) => (answerComes = resolve));
      const search = /\/a2a\/rest\/message:send$/;
      await page.route(search, async (route) => {
        await answerHeld;
        await route.continue();
      });
      await page.locator('#q').fill('ledger');
      await page.locator('#result-count', { hasText: 'Searching…' }).waitFor();
      assert.equal(await page.locator('.results').getAttribute('aria-busy'), 'true');
      // The count is said: a live region inside a busy element is held back by screen readers.
      assert.equal(await page.locator('#result-count').evaluate((el) => el.closest('[aria-busy=true]')?.className ?? null), null, 'no busy ancestor of "Searching…"');
      assert.equal(await page.locator('.results.stale .hit', { hasText: 'Weather Agent' }).count(), 1, 'the last results, drawn as such');
      answerComes();
      await page.locator('.hit', { hasText: 'Ledger Agent' }).waitFor();
      assert.match(await page.locator('#result-count').innerText(), /result|match/);
      assert.equal(await page.locator('.results').getAttribute('aria-busy'), 'false');
      assert.equal(await page.locator('.results.stale').count(), 0);
      await page.unroute(search);
    });
  });

  test('search: an emoji, words with vowel signs, Thai words and C++ are marked as the search matched them', async () => {
    // The page marked runs of letters only: not 🌤, and अनुवाद or พยากรณ์ (vowel signs) not at all.
    await withPage(async (page) => {
      const marks = async (query: string, where: string) => {
        await page.goto(`${registry.url}/?q=${encodeURIComponent(query)}`);
        const hit = page.locator('.hit', { hasText: 'Nimbus' });
        await hit.waitFor();
        return hit.locator(`${where} mark`).allTextContents();
      };
      assert.deepEqual(await marks('🌤', 'h2'), ['🌤️']);
      assert.deepEqual(await marks('अनुवाद', '.hit-description'), ['अनुवाद']);
      assert.deepEqual(await marks('किताब', '.hit-description'), ['किताबों']);
      assert.deepEqual(await marks('พยากรณ์', '.hit-description'), ['พยากรณ์']);
      assert.deepEqual(await marks('c++', '.hit-description'), ['C++']);
      assert.deepEqual(await marks('nimbus -sky', 'h2'), ['Nimbus']);

      // A marked word is seen as marked without its colour: its yellow was 1.2:1 on white (1.7:1
      // in the dark scheme), a word like any other in greyscale. Its background, or an edge drawn
      // around it, must stand 3:1 from the page (WCAG 1.4.1, as 1.4.11 measures a boundary).
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        await marks('nimbus notes', 'h2');
        const drawn = await page.locator('.hit mark').evaluateAll((all) =>
          all.map((mark) => {
            const style = getComputedStyle(mark);
            let around = mark.parentElement;
            while (around && /^(transparent|rgba\(.*, 0\))$/.test(getComputedStyle(around).backgroundColor)) around = around.parentElement;
            const edge = style.boxShadow === 'none' ? (style.outlineStyle === 'none' ? '' : style.outlineColor) : style.boxShadow;
            return { text: mark.textContent, background: style.backgroundColor, edge, page: around ? getComputedStyle(around).backgroundColor : 'rgb(255, 255, 255)' };
          }),
        );
        assert.ok(drawn.length >= 2, `marks in the name and the description: ${JSON.stringify(drawn)}`);
        for (const mark of drawn) {
          const seen = Math.max(contrast(mark.background, mark.page), mark.edge ? contrast(mark.edge, mark.page) : 1);
          assert.ok(seen >= 3, `${colorScheme}: "${mark.text}" stands ${seen.toFixed(2)}:1 from the page (${JSON.stringify(mark)})`);
        }
      }
    });
  });

  test('filters narrow the results, live in the URL, and paging walks the pages', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/`);
      await page.locator('.hit').first().waitFor();
      await page.selectOption('#f-kind', 'mcp-server');
      await page.waitForURL(/kind=mcp-server/);
      await page.locator('.hit .kind-mcp-server').first().waitFor();
      await expectHits(page, ['files']);
      await screenshot(page, 'filter-kind');

      await page.goto(`${registry.url}/?kind=agent`);
      await page.locator('#f-tags').fill('payments, unknown-tag');
      await page.locator('#f-tags').press('Enter');
      await page.waitForURL(/tags=payments/);
      await expectHits(page, ['Ledger Agent']);
      assert.equal(await page.locator('#f-kind').inputValue(), 'agent');
      await screenshot(page, 'filter-tags');

      // Filters that leave nothing: no results, not an empty registry (the live region says it alone).
      await page.goto(`${registry.url}/?kind=mcp-server&tags=no-such-tag`);
      await page.locator('.notice', { hasText: 'Nothing matches with these filters' }).waitFor();
      assert.equal(await page.locator('#result-count').textContent(), 'No results.');
      // And which key left nothing, as the registry says it (the page named none).
      assert.match((await page.locator('.results .notice').innerText()).replace(/\s+/g, ' '), /^Nothing matches with these filters\. Clear the filters\. The filter leaves no entry: no skill has the tag "no-such-tag" \("tags"\); remove or change that key of the filter\.$/);
      // A query of no word search looks for: why, not "Try fewer or other words" (fewer find no more).
      await page.goto(`${registry.url}/?q=the`);
      await page.locator('.results .notice', { hasText: 'The query has no word search looks for' }).waitFor();
      assert.match((await page.locator('.results .notice').innerText()).replace(/\s+/g, ' '), /^Nothing matches\. The query has no word search looks for: "the" is only words/);

      await page.goto(`${registry.url}/?version=0.3`);
      await expectHits(page, ['Weather Agent']);
      assert.equal(await page.locator('#f-version').inputValue(), '0.3');
      // A value the list does not offer, from a link: searched, and shown as the select's choice.
      await page.goto(`${registry.url}/?version=0.3.0`);
      await expectHits(page, ['Weather Agent']);
      assert.equal(await page.locator('#f-version').inputValue(), '0.3.0');
      assert.equal(await page.locator('#f-version').evaluate((s) => (s as HTMLSelectElement).selectedOptions[0]?.textContent), '0.3.0');
      await page.selectOption('#f-version', '');
      await page.waitForURL((url) => !url.search.includes('version'));

      // Paging: 22 fillers, 20 per page.
      await page.goto(`${registry.url}/?q=filler`);
      await page.locator('.hit').first().waitFor();
      assert.equal(await page.locator('.hit').count(), 20);
      const firstPage = await page.locator('.hit h2').allTextContents();
      const historyBefore = await page.evaluate(() => history.length);
      await page.getByRole('link', { name: 'Next page →' }).press('Enter');
      await page.waitForURL(/n=2/);
      await page.waitForFunction(() => document.querySelectorAll('.hit').length === 2);
      const secondPage = await page.locator('.hit h2').allTextContents();
      assert.equal(new Set([...firstPage, ...secondPage]).size, FILLERS, 'the pages do not overlap');
      assert.match((await page.locator('#result-count').textContent()) ?? '', /21–22 of 22/);
      // The focus is on the new page's count, in view, the next Tab on its first result (not at
      // the page's heading, the form and filters between it and the results); Back goes back.
      await page.waitForFunction(() => document.activeElement?.id === 'result-count', undefined, { timeout: 5000 });
      assert.ok(await page.locator('#result-count').evaluate((el) => el.getBoundingClientRect().top >= 0 && el.getBoundingClientRect().bottom <= innerHeight), 'the count is in view');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.closest('.hit')?.querySelector('h2')?.textContent), secondPage[0]);
      assert.equal(await page.evaluate(() => history.length), historyBefore + 1, 'the page is a history entry of its own');
      await screenshot(page, 'paging');
      await page.getByRole('link', { name: '← Previous page' }).click();
      await page.waitForURL((url) => !url.search.includes('n=2'));
      await page.waitForFunction(() => document.querySelectorAll('.hit').length === 20);

      // A shared link whose page token was cut off, its page number left: it is the first page,
      // numbered so, and the URL says so (a reload or the link shared on is that page too).
      await page.goto(`${registry.url}/?q=filler&n=5`);
      await page.locator('#result-count', { hasText: /of 22/ }).waitFor();
      assert.match((await page.locator('#result-count').textContent()) ?? '', /^1–20 of 22/);
      assert.equal(await page.locator('ol.hits').getAttribute('start'), '1');
      assert.equal(await page.getByRole('link', { name: /Previous page|First page/ }).count(), 0);
      await page.waitForURL((url) => url.search === '?q=filler', { timeout: 5000 });

      // The second page's token without its number (n=, n=1, n=2.5), or a number past the results
      // (n=9): a later page of unknown number, said so, with the way to the first page; not "1–2 of 22".
      const secondUrl = new URL((await page.getByRole('link', { name: 'Next page →' }).getAttribute('href'))!, registry.url);
      for (const n of [null, '1', '2.5', '9']) {
        if (n === null) secondUrl.searchParams.delete('n');
        else secondUrl.searchParams.set('n', n);
        await page.goto(secondUrl.href);
        await page.locator('#result-count', { hasText: /22/ }).waitFor();
        assert.equal(await page.locator('#result-count').textContent(), '22 results; 2 on this later page', `n=${n}`);
        assert.equal(await page.locator('.pager span').textContent(), 'A later page');
        assert.equal(await page.getByRole('link', { name: '← First page' }).getAttribute('href'), '/?q=filler');
        assert.equal(await page.locator('ol.hits').getAttribute('start'), null);
      }

      // A registry of thousands (the search's total changed on its way): the count is written
      // with its thousands separated, as the lower bound "10,000+" is, not "1–20 of 12345".
      await page.route(
        `${registry.url}/a2a/rest/message:send`,
        async (route) => {
          const res = await route.fetch();
          const body = (await res.json()) as WireJson;
          (body.task.artifacts[0].parts as WireJson[]).find((part) => part.data)!.data.total = 12345;
          await route.fulfill({ response: res, json: body });
        },
        { times: 1 },
      );
      await page.goto(`${registry.url}/?q=filler`);
      await page.locator('#result-count', { hasText: '12' }).waitFor({ timeout: 5000 });
      assert.equal(await page.locator('#result-count').textContent(), '1–20 of 12,345 results');
    });
  });

  test('a link\'s filters the page has no control for (owner, readOnly, streaming) apply, are listed and can be removed', async () => {
    await withPage(async (page) => {
      // /?owner=alice showed every entry ("1–20 of 59 results"), the owner kept in the URL and ignored.
      await page.goto(`${registry.url}/?q=%22harbour%22&owner=alice`);
      await expectHits(page, ['Harbour Beacon Agent', 'Harbour Lighthouse Agent']);
      assert.equal(await page.locator('details.filters summary').textContent(), 'Filters (1)');
      assert.deepEqual(await page.locator('.link-filters li code').allTextContents(), ['owner=alice']);
      await assertAccessible(page, 'the search with a link\'s owner filter');
      await screenshot(page, 'filters-from-link');
      await page.goto(`${registry.url}/?q=%22harbour%22&owner=bob`);
      await page.locator('.notice', { hasText: 'Nothing matches with these filters' }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'Clear the filters' }).getAttribute('href'), '/?q=%22harbour%22');
      // Booleans: read_file is read-only, write_file is not; every card of these tests streams.
      await page.goto(`${registry.url}/?q=file&kind=mcp-server&readOnly=false`);
      await page.locator('.hit', { hasText: 'files' }).waitFor();
      assert.match((await page.locator('.hit', { hasText: 'files' }).locator('.hit-match').textContent()) ?? '', /write_file/);
      assert.doesNotMatch((await page.locator('.hit', { hasText: 'files' }).locator('.hit-match').textContent()) ?? '', /read_file/);
      await page.goto(`${registry.url}/?q=invoice&streaming=false`);
      await page.locator('#result-count', { hasText: /result|No results/ }).waitFor();
      assert.equal(await page.locator('.hit', { hasText: 'Invoice Agent' }).count(), 0, 'streaming=false leaves out the streaming Invoice Agent');
      // Removed: the search without it, the focus on the filters' summary (not lost with the button).
      await page.getByRole('button', { name: 'Remove the filter streaming' }).click();
      await page.waitForURL((url) => url.search === '?q=invoice');
      await page.locator('.hit', { hasText: 'Invoice Agent' }).first().waitFor();
      assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'SUMMARY');
      // A value such a filter cannot take leaves the URL, named in the notice, as the page's own filters' do.
      await page.goto(`${registry.url}/?q=%22harbour%22&readOnly=yes&owner=%20&capabilities=,`);
      await page.waitForURL((url) => url.search === '?q=%22harbour%22');
      assert.deepEqual(await page.locator('.notice[role=status] li').allTextContents(), [
        'readOnly=yes: only true or false filters.',
        'owner= : blank.',
        'capabilities=,: no value in it.',
      ]);
      await expectHits(page, ['Harbour Beacon Agent', 'Harbour Lighthouse Agent']);
      assert.equal(await page.locator('details.filters summary').textContent(), 'Filters');
    });
  });

  test('within the typing pause: Back goes back (the words do not overwrite its history entry), a filter keeps the words and itself', async () => {
    await withPage(async (page) => {
      // The pause ends when the test says, not 250 ms later: on a busy machine the keys and the
      // Back took longer than the pause, which then wrote the URL first, and the test timed out.
      await holdTimers(page, TYPING_PAUSE_MS, 'endTypingPause');
      await page.goto(`${registry.url}/`);
      await page.locator('.hit').first().waitFor();
      await page.selectOption('#f-kind', 'agent');
      await page.waitForURL(/kind=agent/);
      await page.locator('.hit').first().waitFor();
      // Back within the typing pause.
      await page.locator('#q').pressSequentially('ledg', { delay: 10 });
      await page.goBack();
      await page.waitForURL((url) => url.search === '');
      await releaseTimers(page, 'endTypingPause', { setEarlier: true }); // the pause ends after Back: nothing rewrites the URL
      assert.equal(await page.evaluate(() => window.location.search), '', 'Back stays back');
      assert.equal(await page.locator('#q').inputValue(), '');
      assert.equal(await page.locator('#f-kind').inputValue(), '');
      await page.goForward();
      await page.waitForURL(/\?kind=agent$/);
      assert.equal(await page.locator('#f-kind').inputValue(), 'agent');

      // A filter chosen within the pause: the search has both the words typed and the filter.
      const box = (await page.locator('#f-verified').boundingBox())!;
      await page.locator('#q').pressSequentially('ledger', { delay: 10 });
      await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
      await page.waitForURL(/verified=true/);
      await releaseTimers(page, 'endTypingPause');
      const params = new URLSearchParams(await page.evaluate(() => window.location.search));
      assert.deepEqual([params.get('q'), params.get('kind'), params.get('verified')], ['ledger', 'agent', 'true']);
      await expectHits(page, ['Ledger Agent']);

      // Words searched with Enter, then Back before the page has drawn the Back: the pause the
      // words set (held, and ended here by the Back's own event, ahead of the page's drawing, as a
      // busy machine ended it) is dropped, not written over the entry Back returned to. It was
      // kept past Enter, and took the page forward again to the search Back had left.
      const before = await page.evaluate(() => window.location.search);
      await page.locator('#q').fill('weather');
      await page.locator('#q').press('Enter');
      await page.waitForURL(/q=weather/);
      await page.evaluate(
        (name) =>
          new Promise<void>((resolve) => {
            window.addEventListener(
              'popstate',
              () => {
                (window as unknown as Record<string, () => void>)[name]!();
                resolve();
              },
              { once: true },
            );
            history.back();
          }),
        'endTypingPause',
      );
      assert.equal(await page.evaluate(() => window.location.search), before, 'Back stays back');
      await expectHits(page, ['Ledger Agent']);
      assert.equal(await page.locator('#q').inputValue(), 'ledger');
    });
  });

  test('each search typed is a history entry of its own (its words corrected in one stay in the box replace it): Back returns to the search before', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/`);
      await page.locator('.hit').first().waitFor();
      const entries = await page.evaluate(() => history.length);
      // Typed, paused on, corrected: one history entry. Each write used to replace the entry
      // it was typed on, so Back from "weather" below left the page, the invoice search lost.
      await page.locator('#q').pressSequentially('invoce');
      await page.waitForURL(/\?q=invoce$/);
      await page.locator('#q').press('Backspace');
      await page.locator('#q').press('Backspace');
      await page.locator('#q').pressSequentially('ice');
      await page.waitForURL(/\?q=invoice$/);
      await expectHits(page, ['Invoice Agent']);
      assert.equal(await page.evaluate(() => history.length), entries + 1, 'one entry for the words typed in one stay');
      // Another search, typed after the box lost the focus: an entry of its own.
      await page.locator('h1').click();
      await page.locator('#q').fill('weather');
      await page.waitForURL(/\?q=weather$/);
      await expectHits(page, ['Weather Agent']);
      // And one asked with Enter before the pause: its own too.
      await page.locator('#q').press('Enter');
      await page.locator('#q').fill('ledger');
      await page.locator('#q').press('Enter');
      await page.waitForURL(/\?q=ledger$/);
      await expectHits(page, ['Ledger Agent']);
      assert.equal(await page.evaluate(() => history.length), entries + 3);
      await page.goBack();
      await page.waitForURL(/\?q=weather$/);
      await expectHits(page, ['Weather Agent']);
      assert.equal(await page.locator('#q').inputValue(), 'weather');
      await page.goBack();
      await page.waitForURL(/\?q=invoice$/);
      await expectHits(page, ['Invoice Agent']);
      assert.equal(await page.locator('#q').inputValue(), 'invoice');
      await page.goBack();
      await page.waitForURL((url) => url.search === '');
      // The box follows the URL once the page has drawn it (no hits to wait for here, unlike the
      // steps above): read when it has, or after 5 s, which fails below.
      await page.waitForFunction(() => (document.querySelector('#q') as HTMLInputElement | null)?.value === '', undefined, { timeout: 5000 }).catch(() => undefined);
      assert.equal(await page.locator('#q').inputValue(), '');
    });
  });

  test('arrowing through a filter\'s options: one history entry and one search, Back returns to the search before', async () => {
    await withPage(async (page) => {
      // The pause ends when the test says: on a busy machine a key could come after it.
      await holdTimers(page, TYPING_PAUSE_MS, 'endPause');
      await page.goto(`${registry.url}/?q=%22harbour%22`);
      await expectHits(page, ['Harbour Beacon Agent', 'Harbour Lighthouse Agent']);
      const entries = await page.evaluate(() => history.length);
      let searches = 0;
      page.on('request', (r) => void (r.url().endsWith('/message:send') && searches++));
      // Each ArrowDown on a closed select is a change: each pushed a history entry and searched.
      await page.locator('#f-health').focus();
      for (const value of ['ok', 'unreachable', 'invalid', 'any']) {
        await page.keyboard.press('ArrowDown');
        await page.waitForURL(new RegExp(`health=${value}`));
      }
      assert.equal(await page.evaluate(() => history.length), entries + 1, 'one history entry for the options passed');
      assert.equal(searches, 0, 'searched within the pause');
      const answered = page.waitForResponse((r) => r.url().endsWith('/message:send'));
      await releaseTimers(page, 'endPause');
      assert.match((await answered).request().postData() ?? '', /"health":"any"/);
      await page.locator('#result-count', { hasText: '2 results' }).waitFor();
      assert.equal(searches, 1, 'one search, for the option arrowed to');
      assert.equal(await page.locator('#f-health').inputValue(), 'any');
      // The focus leaves and comes back: the next change is a history entry of its own.
      await page.locator('#f-kind').focus();
      await page.locator('#f-health').focus();
      await page.keyboard.press('ArrowUp');
      await page.waitForURL(/health=invalid/);
      assert.equal(await page.evaluate(() => history.length), entries + 2);
      await releaseTimers(page, 'endPause');
      await page.goBack();
      await page.waitForURL(/health=any/);
      await page.goBack();
      await page.waitForURL((url) => url.search === '?q=%22harbour%22');
      await expectHits(page, ['Harbour Beacon Agent', 'Harbour Lighthouse Agent']);
      assert.equal(await page.locator('#f-health').inputValue(), '');
      // A change between the last one's drawing and its effect (on a busy machine): searched after the pause too.
      const before = searches;
      await page.evaluate(async () => {
        const select = document.querySelector<HTMLSelectElement>('#f-health')!;
        select.focus();
        for (const value of ['ok', 'unreachable']) {
          select.value = value;
          select.dispatchEvent(new Event('change', { bubbles: true }));
          await Promise.resolve();
        }
      });
      await page.waitForURL(/health=unreachable/);
      await page.waitForTimeout(200);
      assert.equal(searches, before, 'searched within the pause');
      await releaseTimers(page, 'endPause');
      await expectHits(page, ['Harbour Lighthouse Agent']);
    });
  });

  test('Back with skill tags typed and not committed goes back: no new history entry, Forward still there', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/?q=invoice`);
      await page.locator('.hit').first().waitFor();
      await page.selectOption('#f-kind', 'agent');
      await page.waitForURL(/kind=agent/);
      const entries = await page.evaluate(() => history.length);
      // Typed, neither Enter pressed nor the box left: Back moves the focus to the heading, and
      // the box's "change" on blur pushed /?q=invoice&tags=finance, the entry Forward went to lost.
      await page.locator('#f-tags').pressSequentially('finance', { delay: 10 });
      await page.goBack();
      await page.waitForFunction(() => document.activeElement?.tagName === 'H1');
      assert.equal(await page.evaluate(() => window.location.search), '?q=invoice', 'Back stays back');
      assert.equal(await page.evaluate(() => history.length), entries, 'no history entry added');
      assert.equal(await page.locator('#f-tags').inputValue(), '', 'the tags of the entry Back went to');
      await page.goForward();
      await page.waitForURL(/\?q=invoice&kind=agent$/);
      assert.equal(await page.locator('#f-kind').inputValue(), 'agent');
      assert.equal(await page.locator('#f-tags').inputValue(), '');

      // Typed, then committed by leaving the box (Tab): the filter applies, as before.
      await page.locator('#f-tags').pressSequentially('finance', { delay: 10 });
      await page.keyboard.press('Tab');
      await page.waitForURL(/tags=finance/);
      assert.equal(await page.evaluate(() => history.length), entries + 1);
    });
  });

  test('Back from an entry returns to the place in the results: scrolled as before, the focus on the link followed', async () => {
    await withPage(async (page) => {
      await page.setViewportSize({ width: 1000, height: 600 });
      await page.goto(`${registry.url}/?q=filler`);
      await page.locator('.hit').nth(19).waitFor();
      const link = page.locator('.hit h2 a').nth(14);
      const name = (await link.textContent())!;
      await link.scrollIntoViewIfNeeded();
      const scrolled = await page.evaluate(() => window.scrollY);
      assert.ok(scrolled > 1000, `scrolled down the results (${scrolled} px)`);
      await link.click();
      await page.locator('h1', { hasText: name }).waitFor();
      assert.equal(await page.evaluate(() => window.scrollY), 0, 'the entry opens at its top');

      await page.goBack();
      await page.waitForFunction((n) => document.activeElement?.textContent === n, name);
      assert.equal(await page.evaluate(() => window.scrollY), scrolled);
      await screenshot(page, 'back-to-results');

      // The same with the keyboard, to the next page of results and Back.
      const next = page.getByRole('link', { name: 'Next page →' });
      await next.focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/n=2/);
      await page.waitForFunction(() => document.querySelectorAll('.hit').length === 2);
      await page.goBack();
      await page.waitForFunction(() => document.activeElement?.textContent === 'Next page →');
      assert.equal(await page.locator('.hit').count(), 20);

      // Or by the entry's own way back ("Search" above it): to the results it was opened from,
      // the words and page kept, not to an empty search.
      await page.getByRole('link', { name: 'Next page →' }).click();
      await page.waitForURL(/n=2/);
      const secondPage = page.url();
      await page.locator('.hit h2 a').first().click();
      await page.locator('.breadcrumb a', { hasText: 'Search' }).click();
      await page.waitForURL(secondPage);
      await page.waitForFunction(() => document.querySelectorAll('.hit').length === 2);
    });
  });

  test('a link to a later page whose page token the registry refuses offers the first page of the same search', async () => {
    await withPage(async (page) => {
      // A shared link cut short: the page token lost its end.
      await page.goto(`${registry.url}/?q=filler`);
      await page.getByRole('link', { name: 'Next page →' }).waitFor();
      const next = new URL((await page.getByRole('link', { name: 'Next page →' }).getAttribute('href'))!, registry.url);
      next.searchParams.set('p', next.searchParams.get('p')!.slice(0, -4));
      await page.goto(next.href);
      await page.locator('[role=alert]', { hasText: 'BAD_REQUEST' }).waitFor();
      page.problems.length = 0;
      await screenshot(page, 'page-token-refused');
      await page.getByRole('link', { name: 'Go to the first page of this search' }).click();
      await page.waitForURL((url) => url.search === '?q=filler');
      await page.waitForFunction(() => document.querySelectorAll('.hit').length === 20);
      assert.equal(await page.locator('#q').inputValue(), 'filler');

      // Garbled past any page token's length: the same way out, and no wire path of the registry's request.
      next.searchParams.set('p', 'x'.repeat(513));
      await page.goto(next.href);
      const refused = page.locator('[role=alert]', { hasText: "This link's page token is 513 characters; the registry's are at most 512." });
      await refused.waitFor();
      assert.doesNotMatch((await refused.textContent()) ?? '', /parts/);
      await page.getByRole('link', { name: 'Go to the first page of this search' }).waitFor();
    });
  });

  test('health: each hit says whether its live card answered, the filter keeps one status, the entry shows source and last check', async () => {
    await withPage(async (page) => {
      // A link with filter values that cannot apply: they leave the URL, a notice names each, and no filter is counted.
      // Values longer than the registry takes are left out the same way, the limit said (not the
      // registry's refusal, which names its wire request: /parts/0/data/search/filter/...).
      await page.goto(`${registry.url}/?q=%22harbour%22&kind=bogus&health=sunny&verified=yes&tags=,,&binding=${'b'.repeat(101)}&version=${'1'.repeat(21)}`);
      await page.waitForURL((url) => url.search === '?q=%22harbour%22');
      await expectHits(page, ['Harbour Beacon Agent', 'Harbour Lighthouse Agent']);
      const leftOut = page.locator('.notice[role=status]');
      assert.deepEqual(await leftOut.locator('li').allTextContents(), [
        'kind=bogus: not a kind of entry (agent or mcp-server).',
        'tags=,,: no tag in it.',
        `binding=${'b'.repeat(60)}…: longer than 100 characters, the most this registry takes.`,
        `version=${'1'.repeat(21)}: longer than 20 characters, the most this registry takes.`,
        'verified=yes: only verified=true filters.',
        'health=sunny: not a health status (ok, unreachable, invalid, any).',
      ]);
      assert.equal(await page.locator('details.filters summary').textContent(), 'Filters');
      assert.deepEqual(await Promise.all(['#f-kind', '#f-health', '#f-tags'].map((s) => page.locator(s).inputValue())), ['', '', '']);
      assert.equal(await page.locator('#f-kind').evaluate((el: HTMLSelectElement) => el.selectedOptions[0]?.textContent), 'All kinds', 'the select shows "All kinds", not a blank');
      await screenshot(page, 'filters-left-out');
      await assertAccessible(page, 'the search with filters left out');
      await page.goBack(); // the link's own entry was replaced: Back leaves the search
      assert.equal(new URL(page.url()).search, '', 'no history entry holds the ignored filters');
      await page.goto(`${registry.url}/?q=%22harbour%22&tags=harbour,${'t'.repeat(201)}`);
      await page.waitForURL((url) => url.search === '?q=%22harbour%22');
      assert.deepEqual(await leftOut.locator('li').allTextContents(), [`tags=harbour,${'t'.repeat(52)}…: a tag longer than 200 characters, the most this registry takes.`]);
      // A binding or version of only white space: left out too (the registry refused it, and the whole search failed).
      await page.goto(`${registry.url}/?q=%22harbour%22&binding=%20&version=%20%20`);
      await page.waitForURL((url) => url.search === '?q=%22harbour%22');
      await expectHits(page, ['Harbour Beacon Agent', 'Harbour Lighthouse Agent']);
      assert.deepEqual(await leftOut.locator('li').allTextContents(), ['binding= : blank.', 'version=  : blank.']);
      // Characters as the registry counts them, code points: a tag of 150 emoji (300 UTF-16 units) is no longer left out, but searched.
      await page.goto(`${registry.url}/?q=%22harbour%22&tags=${encodeURIComponent('🌦'.repeat(150))}`);
      await page.locator('.notice', { hasText: 'Nothing matches with these filters' }).waitFor();
      assert.equal(new URL(page.url()).searchParams.get('tags'), '🌦'.repeat(150));
      // A long value is cut between characters: never half an emoji (it showed as "�").
      await page.goto(`${registry.url}/?q=%22harbour%22&verified=x${'🌦'.repeat(80)}`);
      await page.waitForURL((url) => url.search === '?q=%22harbour%22');
      assert.deepEqual(await leftOut.locator('li').allTextContents(), [`verified=x${'🌦'.repeat(59)}…: only verified=true filters.`]);
      // More tags than the registry takes: not searched with the first 20 only (another search than the link's).
      const tags = Array.from({ length: 21 }, (_, i) => `t${i}`).join(',');
      await page.goto(`${registry.url}/?q=%22harbour%22&tags=${tags}`);
      await page.waitForURL((url) => url.search === '?q=%22harbour%22');
      assert.deepEqual(await leftOut.locator('li').allTextContents(), [`tags=${tags.slice(0, 60)}…: more than 20 tags, the most this registry takes.`]);
      assert.equal(await page.locator('[role=alert]').count(), 0);
      await page.goto(`${registry.url}/?q=%22harbour%22`); // quoted: the word as written (unquoted, WordNet also relates it to "keeping" in other cards)
      await expectHits(page, ['Harbour Beacon Agent', 'Harbour Lighthouse Agent']);
      assert.equal(await leftOut.count(), 0, 'said once, for the link that had them');
      assert.equal(await page.locator('.hit', { hasText: 'Beacon' }).locator('.badge', { hasText: /^Reachable$/ }).count(), 1);
      // When it was checked (the badge's tooltip) is said to screen readers too: a title is for the mouse only.
      const beacon = await page.locator('.hit', { hasText: 'Beacon' }).ariaSnapshot();
      assert.match(beacon, /Reachable \(Checked [^)]+\)/, beacon);
      assert.equal(await page.locator('.hit', { hasText: 'Lighthouse' }).locator('.badge', { hasText: 'Unreachable' }).count(), 1);
      await page.selectOption('#f-health', 'unreachable');
      await page.waitForURL(/health=unreachable/);
      await expectHits(page, ['Harbour Lighthouse Agent']);
      await screenshot(page, 'filter-health');
      await page.selectOption('#f-health', 'ok');
      await page.waitForURL(/health=ok/);
      await expectHits(page, ['Harbour Beacon Agent']);
      assert.equal(await page.locator('#f-health option').count(), 5, 'reachable, unreachable, invalid, any, and no filter');

      await page.goto(`${registry.url}/entries/${ids.lighthouse}`);
      await page.locator('h1', { hasText: 'Harbour Lighthouse Agent' }).waitFor();
      const facts = (await page.locator('.entry-head dl.facts').textContent()) ?? '';
      assert.ok(facts.includes(`${origin.url}/lighthouse`), `the source URL: ${facts}`);
      assert.match(facts, /Unreachable since .*1 failed check; last checked/);
      assert.match(facts, /503/, 'the reason the check failed');
      await screenshot(page, 'entry-unreachable');
      await assertAccessible(page, 'an entry with source and health');

      // Another kind of failure (a web page where the card was): a new status, the same run of failures.
      const lighthouseCard = '/lighthouse/.well-known/agent-card.json';
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      origin.route(lighthouseCard, (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>'));
      await op(alice, { refresh: { id: ids.lighthouse } });
      await page.reload();
      await page.locator('h1', { hasText: 'Harbour Lighthouse Agent' }).waitFor();
      const flipped = (await page.locator('.entry-head dl.facts').textContent()) ?? '';
      assert.match(flipped, /Invalid live document since .*, 2 failed checks in a row since .*; last checked/);
      // The message quotes what the server sent (V8's JSON.parse error quotes the body): a
      // right-to-left override there is shown as its escape, and reverses nothing of the page's.
      origin.route(lighthouseCard, (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('\u202e{"x": 1}'));
      await op(alice, { refresh: { id: ids.lighthouse } });
      await page.reload();
      await page.locator('h1', { hasText: 'Harbour Lighthouse Agent' }).waitFor();
      const quoted = (await page.locator('.entry-head dl.facts').textContent()) ?? '';
      assert.ok(quoted.includes(`Unexpected token '\\u202e'`) && !quoted.includes('\u202e'), quoted);
      // Dark again, as the other tests know it.
      origin.route(lighthouseCard, (_req, res) => void res.writeHead(503).end());
      await op(alice, { refresh: { id: ids.lighthouse } });
    });
  });

  test('a search whose only matches are hidden as unhealthy (REGISTRY_HIDE_UNHEALTHY_SECONDS) offers to search them too', async () => {
    // Without hiding, nothing found is only that.
    await withPage(async (page) => {
      await page.goto(`${registry.url}/?q=zyzzyva`);
      await page.locator('.notice', { hasText: 'Nothing matches. Try fewer or other words.' }).waitFor();
      assert.doesNotMatch((await page.locator('.results .notice').textContent()) ?? '', /hidden/);
    });
    const hiding = await startTestRegistry({ REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_HIDE_UNHEALTHY_SECONDS: '1' });
    try {
      const alice = await sdkClient(hiding.url, { token: TOKENS.alice });
      const card: WireJson = v1Card('Quokka Beta Agent', 'https://quokka.example.org/a2a');
      card.description = 'The quokka of the beta.';
      serveCard(origin, card, '/quokka');
      const { id } = await registerByUrl(alice, `${origin.url}/quokka`);
      origin.route('/quokka/.well-known/agent-card.json', (_req, res) => void res.writeHead(503).end());
      await op(alice, { refresh: { id } });
      const found = async (filter?: WireJson) => resultOf(await op(alice, { search: { query: 'quokka', ...(filter ? { filter } : {}) } })).results.length > 0;
      await waitFor(async () => !(await found()), 'the failing entry to be hidden after 1 s');
      await withPage(async (page) => {
        // It said "Nothing matches. Try fewer or other words.": the words were right.
        await page.goto(`${hiding.url}/?q=quokka`);
        const empty = page.locator('.results .notice', { hasText: 'hidden' });
        await empty.waitFor();
        assert.equal(
          (await empty.innerText()).replace(/\s+/g, ' '),
          'Nothing matches. Try fewer or other words. Entries whose health checks have failed for a while are hidden from searches: search them too (Health: Any, including hidden).',
        );
        await assertAccessible(page, 'an empty search that may have hidden entries');
        await empty.getByRole('link', { name: 'search them too' }).click();
        await page.waitForURL((url) => url.search === '?q=quokka&health=any');
        await expectHits(page, ['Quokka Beta Agent']);
        assert.equal(await page.locator('#f-health').inputValue(), 'any');
        // With filters, cleared or not, the same way out.
        await page.goto(`${hiding.url}/?q=quokka&kind=agent`);
        await page.locator('.results .notice', { hasText: 'Clear the filters' }).waitFor();
        assert.equal(await page.getByRole('link', { name: 'search them too' }).getAttribute('href'), '/?q=quokka&kind=agent&health=any');
        // A health filter chosen: nothing is hidden from it, nothing to offer.
        await page.goto(`${hiding.url}/?q=quokka&health=ok`);
        await page.locator('.results .notice', { hasText: 'Nothing matches with these filters' }).waitFor();
        assert.equal(await page.getByRole('link', { name: 'search them too' }).count(), 0);
      });
    } finally {
      await hiding.close();
    }
  });

  test('the filters show each option whole, at desktop, tablet and phone widths ("Any, including hidden" was cut at 1280 px)', async () => {
    await withPage(async (page) => {
      // One load, then each width: the filters' layout is the stylesheet's alone (a filter set
      // keeps them open at every width), and a load per width cost as much as the rest.
      await page.goto(`${registry.url}/?health=any`);
      await page.locator('#f-health').waitFor();
      for (const width of [1280, 1100, 1024, 900, 768, 600, 375]) {
        await page.setViewportSize({ width, height: 900 });
        const cut = await page.locator('.filter-grid select').evaluateAll((selects) =>
          selects.flatMap((select) => {
            const style = getComputedStyle(select);
            const context = document.createElement('canvas').getContext('2d')!;
            context.font = style.font;
            // The room for the text: the box, less its padding and Chromium's arrow at its end (20 px).
            const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
            return [...(select as HTMLSelectElement).options]
              .filter((option) => context.measureText(option.text).width > room)
              .map((option) => `${select.id}: "${option.text}" is ${Math.ceil(context.measureText(option.text).width)} px in ${Math.floor(room)} px`);
          }),
        );
        assert.deepEqual(cut, [], `at ${width} px`);
      }
      await screenshot(page, 'filters-375');
    });
  });

  test('verified: the filter keeps entries whose card a trusted key signed; the entry page shows each signature', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/?kind=agent`);
      await page.locator('.hit').first().waitFor();
      await page.locator('#f-verified').check();
      await page.waitForURL(/verified=true/);
      await expectHits(page, ['Ledger Agent']);
      assert.equal(await page.locator('.hit .badge', { hasText: 'Verified' }).count(), 1);
      // Which key verified it (the badge's tooltip) is said to screen readers too.
      const verified = await page.locator('.hit', { hasText: 'Ledger Agent' }).ariaSnapshot();
      assert.match(verified, /Verified \(Signature verified with key web-trusted of the registry operator's own keys\)/, verified);
      assert.equal(await page.locator('#f-kind').inputValue(), 'agent', 'the other filters stay');
      await screenshot(page, 'filter-verified');
      await page.getByRole('link', { name: 'Ledger Agent' }).click();
      await page.locator('h1', { hasText: 'Ledger Agent' }).waitFor();
      assert.match((await page.locator('dd.signatures').textContent()) ?? '', /verified\s*ES256\s*key web-trusted/);
      await screenshot(page, 'entry-signed');
      // A signer's kid is any text of its header: a right-to-left override in it is shown as its escape and reverses nothing after it.
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const card = { ...v1Card('Kid Override Agent', 'https://kid-override.example.org/a2a'), signatures: [{ protected: Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'operator\u202e' })).toString('base64url'), signature: 'AAAA' }] };
      const { id } = resultOf(await op(alice, { register: { agentCard: card } }));
      try {
        await page.goto(`${registry.url}/entries/${id}`);
        await page.locator('h1', { hasText: 'Kid Override Agent' }).waitFor();
        const shown = (await page.locator('dd.signatures').textContent()) ?? '';
        assert.ok(shown.includes('key operator\\u202e') && shown.includes('(no trusted key has kid "operator\\u202e")') && !shown.includes('\u202e'), shown);
      } finally {
        resultOf(await op(alice, { unregister: { id } }));
      }
      await page.goto(`${registry.url}/entries/${ids.invoice}`);
      await page.locator('h1', { hasText: 'Invoice Agent' }).waitFor();
      assert.equal(await page.locator('dd.signatures').textContent(), 'The card is not signed.');
      assert.equal(await page.locator('.entry-head .badge', { hasText: 'Verified' }).count(), 0);
    });
  });

  test('an entry: the card for people, interfaces with copy buttons, security, owner, raw JSON; an MCP server with its tool hints', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/?q=invoice`);
      // Opened in a new tab (nothing of this tab's memory there): its way back ("Search") is still
      // the search it was opened from, not an empty search.
      const [tab] = await Promise.all([page.context().waitForEvent('page', { timeout: 5000 }), page.getByRole('link', { name: 'Invoice Agent' }).click({ modifiers: ['Control'] })]);
      try {
        await tab.locator('h1', { hasText: 'Invoice Agent' }).waitFor();
        assert.equal(await tab.locator('.breadcrumb a', { hasText: 'Search' }).getAttribute('href'), '/?q=invoice');
      } finally {
        await tab.close();
      }
      await page.getByRole('link', { name: 'Invoice Agent' }).click();
      await page.waitForURL((url) => url.pathname === `/entries/${ids.invoice}`);
      const h1 = page.locator('h1');
      await h1.filter({ hasText: 'Invoice Agent' }).waitFor();
      // The search's matches are the current revision's: the links to older revisions leave them out.
      assert.ok(new URL(page.url()).searchParams.has('matched'));
      assert.deepEqual(await page.locator('table.revisions a').evaluateAll((links) => links.map((a) => new URL((a as HTMLAnchorElement).href).search)), ['?revision=2', '?revision=1']);
      assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'H1', 'focus moves to the new page');
      assert.match(await page.title(), /^Invoice Agent · /);
      const text = (await page.locator('article').textContent()) ?? '';
      for (const expected of ['Translates, checks and files invoices.', 'alice', 'Translate invoice', 'Check VAT', 'Translate this invoice into German', 'receipts', 'Streaming (SSE)']) {
        assert.ok(text.includes(expected), `the entry page shows "${expected}"`);
      }
      await page.getByRole('button', { name: 'Copy the JSONRPC URL https://invoices.example.org/a2a' }).click();
      await page.locator('.copy-status', { hasText: 'Copied' }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'https://invoices.example.org/a2a');
      const stable = page.getByRole('link', { name: `/agents/${ids.invoice}/card.json` });
      const card = await (await fetch(new URL((await stable.getAttribute('href'))!, registry.url))).json();
      assert.equal((card as WireJson).version, '1.3.0', 'the stable URL serves the current card');
      // Followed, it saves the card under its own name (not "true", a bare download attribute's value).
      const [download] = await Promise.all([page.waitForEvent('download'), stable.click()]);
      assert.equal(download.suggestedFilename(), 'card.json');
      assert.equal((JSON.parse(fs.readFileSync((await download.path())!, 'utf8')) as WireJson).version, '1.3.0');
      await page.locator('summary', { hasText: 'as registered' }).click();
      assert.equal(JSON.parse((await page.locator('pre.code').last().textContent()) ?? '').version, '1.3.0');
      await screenshot(page, 'entry-agent');
      await assertAccessible(page, 'an agent entry');
      // The links that open in a new tab (the provider's site) say so to screen readers (WCAG G201).
      const newTab = page.locator('a[target=_blank]');
      assert.ok((await newTab.count()) > 0, 'the entry links the provider');
      assert.equal(await page.getByRole('link', { name: /\(opens in a new tab\)$/ }).count(), await newTab.count(), 'each new-tab link says so');
      assert.equal(await page.getByRole('link', { name: 'https://invoice-works.example.org/about (opens in a new tab)', exact: true }).count(), 1);

      await page.goto(`${registry.url}/entries/${ids.ledger}`);
      await page.locator('#security-h').waitFor();
      const security = (await page.locator('section', { has: page.locator('#security-h') }).textContent()) ?? '';
      for (const expected of ['HTTP authentication', 'Bearer', 'JWT', 'OAuth 2.0', 'https://auth.example.org/token', 'ledger:read', 'oauth (ledger:read)']) {
        assert.ok(security.includes(expected), `security shows "${expected}"`);
      }

      await page.goto(`${registry.url}/entries/${ids.files}`);
      await page.locator('#tools-h').waitFor();
      const read = page.locator('#tool-read_file');
      // Read-only: not destructive and idempotent, as search counts it (MCP: those two hints mean
      // something only when readOnlyHint is false); "Not idempotent (default)" was shown.
      assert.deepEqual(await read.locator('.hints li').allTextContents(), ['Read-only', 'Open world (default)']);
      assert.match((await read.locator('.hints li').first().getAttribute('title')) ?? '', /not destructive and idempotent/);
      const reader = await sdkClient(registry.url, { token: TOKENS.bob });
      const idempotent = resultOf(await op(reader, { search: { query: 'read_file', filter: { idempotent: true }, resultsPer: 'match' } })) as WireJson;
      assert.ok((idempotent.results as WireJson[]).some((hit) => hit.id === ids.files && hit.match.name === 'read_file'), 'search counts read_file idempotent');
      const write = page.locator('#tool-write_file');
      assert.deepEqual(await write.locator('.hints li').allTextContents(), [
        'May modify its environment (default)',
        'Destructive (default)',
        'Not idempotent (default)',
        'Open world (default)',
      ]);
      assert.match((await read.locator('table.params').textContent()) ?? '', /path.*required.*string/);
      // Each tool's schema toggle says whose it is: "Input schema" alone, once per tool, told a
      // screen reader's list of controls nothing about which is which.
      // (The name as the browser gives it to a screen reader: its accessibility tree, asked by name.)
      const cdp = await page.context().newCDPSession(page);
      const { root } = await cdp.send('DOM.getDocument', { depth: 0 });
      for (const tool of ['read_file', 'write_file']) {
        const toggle = page.locator(`#tool-${tool} summary`);
        const shown = await toggle.evaluate((el) => [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join(''));
        assert.match(shown, /^Input schema( and output schema)?$/, 'the words on screen are as they were');
        const { nodes } = await cdp.send('Accessibility.queryAXTree', { nodeId: root.nodeId, accessibleName: `${shown} of ${tool}` });
        assert.deepEqual(nodes.map((n) => n.role?.value), ['DisclosureTriangle'], `${tool}: ${JSON.stringify(nodes.map((n) => [n.role?.value, n.name?.value]))}`);
      }
      await cdp.detach();
      // The documents' copy buttons name them as the page writes them ("MCP", not "mcp", read out letter by letter or not).
      for (const name of ['Copy the URL of the server and toolspec', 'Copy the URL of its MCP Server Card']) {
        assert.equal(await page.getByRole('button', { name, exact: true }).count(), 1, name);
      }
      await screenshot(page, 'entry-mcp');

      await page.goto(`${registry.url}/entries/00000000-0000-4000-8000-000000000000`);
      await page.locator('h1', { hasText: 'Entry not available' }).waitFor();
      assert.match((await page.locator('[role=alert]').textContent()) ?? '', /NOT_FOUND/);
      // A garbled link (an id longer than any, a revision past the largest integer): no entry, or
      // the current revision, as for `revision=abc`; never the registry's refusal naming its wire request.
      await page.goto(`${registry.url}/entries/${'a'.repeat(101)}`);
      const noSuch = page.locator('[role=alert]', { hasText: 'No entry has an id of 101 characters: ids are at most 100.' });
      await noSuch.waitFor();
      assert.match((await noSuch.textContent()) ?? '', /^No such entry NOT_FOUND/);
      await page.goto(`${registry.url}/entries/${ids.invoice}?revision=99999999999999999999`);
      await page.locator('h1', { hasText: 'Invoice Agent' }).waitFor();
      assert.equal(await page.locator('[role=alert]').count(), 0);

      // No page at all at that path: the page's own "not found", with the way back to search.
      const missing = await page.goto(`${registry.url}/entries/${ids.invoice}/extra`);
      assert.equal(missing?.status(), 404);
      await page.locator('h1', { hasText: 'Page not found' }).waitFor();
      assert.match(await page.title(), /^Page not found · /);
      assert.match((await page.locator('main').textContent()) ?? '', new RegExp(`no page at /entries/${ids.invoice}/extra`));
      page.problems.length = 0; // the browser logs the 404 itself
      await screenshot(page, 'page-not-found');
      await assertAccessible(page, 'the "not found" page');
      await page.getByRole('link', { name: 'Search the registry' }).click();
      await page.locator('.hit').first().waitFor();
      assert.equal(new URL(page.url()).pathname, '/');
      // An id that is not valid percent-encoding names no entry: the same page, not a blank one.
      await page.goto(`${registry.url}/entries/%ff`);
      await page.locator('h1', { hasText: 'Page not found' }).waitFor();
      page.problems.length = 0; // the browser logs the 404 itself
      // The server answers /validate/ with the page (its routes ignore a trailing slash): the page is there too.
      assert.equal((await page.goto(`${registry.url}/validate/`))?.status(), 200);
      await page.locator('#document').waitFor();
      assert.equal(await page.locator('h1', { hasText: 'Page not found' }).count(), 0);
    });
  });

  test('a URL with a user name or password is shown as text, not linked: "https://trusted.example.org@evil.example.net" leads to evil', async () => {
    const card: WireJson = v1Card('Disguised Links Agent', 'https://disguised.example.org/a2a');
    card.documentationUrl = 'https://trusted.example.org@evil.example.net/docs';
    card.provider = { organization: 'Disguise Ltd', url: 'https://user:pw@disguise.example.org/' };
    card.iconUrl = 'https://disguise.example.org/icon.png';
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const registered = resultOf(await op(alice, { register: { agentCard: card } }));
    assert.deepEqual(
      registered.warnings.filter((w: WireJson) => w.rule === 'credentials-url').map((w: WireJson) => w.path).sort(),
      ['/documentationUrl', '/provider/url'],
    );
    await withPage(async (page) => {
      await page.goto(`${registry.url}/entries/${registered.id}`);
      await page.locator('#about-h').waitFor();
      const about = page.locator('section', { has: page.locator('#about-h') });
      const links = await about.locator('a').evaluateAll((anchors) => anchors.map((a) => a.getAttribute('href')));
      assert.deepEqual(links.filter((href) => href !== null && href.includes('@')), [], JSON.stringify(links));
      const shown = await about.locator('span.mono').allTextContents();
      for (const url of [card.documentationUrl, card.provider.url]) assert.ok(shown.includes(url), `${url} shown as text: ${JSON.stringify(shown)}`);
    });
  });

  test('a notice quoting a link or the registry shows a bidirectional control as its escape: an id with U+202E does not read "."exe.pdf', async () => {
    await withPage(async (page) => {
      /** The notice's text, once shown: no bidirectional control in it bare. */
      const said = async (notice: ReturnType<Page['locator']>) => {
        await notice.waitFor();
        const text = (await notice.textContent()) ?? '';
        assert.ok(!/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(text), `a bidirectional control shown bare: ${JSON.stringify(text)}`);
        return text;
      };
      // The registry's message quotes the link's id: U+202E reversed the rest of it, `No entry has id "."exe.pdf`.
      await page.goto(`${registry.url}/entries/%E2%80%AEfdp.exe`);
      const refusal = await said(page.locator('[role=alert]', { hasText: 'NOT_FOUND' }));
      assert.ok(refusal.includes('No entry has id "\\u202efdp.exe".'), refusal);
      assert.equal(await page.locator('[role=alert] bdi', { hasText: 'No entry has id' }).count(), 1, 'the message is isolated from the page\'s words');
      // A link's value the page leaves out, quoted in its notice.
      await page.goto(`${registry.url}/?q=%22harbour%22&kind=%E2%80%AEbogus`);
      const leftOut = await said(page.locator('.notice[role=status]', { hasText: 'left out' }));
      assert.ok(leftOut.includes('kind=\\u202ebogus: not a kind of entry'), leftOut);
      // A revision that is no number, quoted too.
      await page.goto(`${registry.url}/entries/${ids.invoice}?revision=%E2%80%AE2`);
      const stray = await said(page.locator('.notice[role=status]', { hasText: 'not a revision number' }));
      assert.ok(stray.includes('revision \\u202e2, which'), stray);
    });
  });

  test('schemas and the raw JSON show a bidirectional control as its escape: a nested description that reads "evil" reversed stays readable as it is', async () => {
    // Nested schema members are kept as sent (validation checks what is shown as text); shown
    // bare, U+202E reordered the JSON around it.
    const tools = toolspec();
    const tool = (tools.tools as WireJson[])[0]!;
    tool.outputSchema = { type: 'object', properties: { ok: { type: 'boolean', description: 'true \u202elive\u202c when done' } } };
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const { id } = resultOf(await op(alice, { register: { mcpServer: mcpServer('bidi-schema', 'https://bidi-schema.example.org/mcp'), toolspec: tools } }));
    await withPage(async (page) => {
      await page.goto(`${registry.url}/entries/${id}`);
      await page.locator('#tools-h').waitFor();
      await page.locator('summary', { hasText: 'Input schema and output schema' }).first().click();
      await page.locator('summary', { hasText: 'as registered' }).click();
      const shown = await page.locator('pre.code').allTextContents();
      const withIt = shown.filter((text) => text.includes('live'));
      assert.equal(withIt.length, 2, 'the output schema and the raw JSON');
      for (const text of withIt) {
        assert.ok(!/[\u202a-\u202e]/.test(text), 'no bidirectional control shown bare');
        assert.ok(text.includes('"true \\u202elive\\u202c when done"'), text);
        assert.equal(JSON.parse(text.slice(text.indexOf('{'))).constructor, Object, 'still JSON');
      }
    });
  });

  test('history: revisions listed, any two compared as a diff, the pair in the URL', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/entries/${ids.invoice}`);
      await page.locator('#history-h').waitFor();
      const rows = await page.locator('table.revisions tbody tr td:first-child').allTextContents();
      assert.deepEqual(rows.map((r) => r.match(/^\d+/)?.[0]), ['3', '2', '1']);
      await page.selectOption('#diff-from', '1');
      await page.selectOption('#diff-to', '3');
      await page.getByRole('button', { name: 'Compare' }).click();
      await page.waitForURL(/from=1&to=3/);
      await page.locator('.diff-table').waitFor();
      const removed = await page.locator('.line-removed').allTextContents();
      const added = await page.locator('.line-added').allTextContents();
      assert.ok(removed.some((l) => l.includes('"description": "Invoice Agent translates and checks invoices."')), removed.join('\n'));
      assert.ok(added.some((l) => l.includes('"description": "Translates, checks and files invoices."')), added.join('\n'));
      assert.ok(added.some((l) => l.includes('"receipts"')));
      assert.ok(removed.some((l) => l.includes('"version": "1.2.0"')));
      assert.match((await page.locator('.diff-summary').textContent()) ?? '', /\+\d+ −\d+ lines/);
      // A screen reader hears what the comparison found, not every line of it read out at once:
      // the summary is the live part, the table is outside any live region.
      assert.match(await page.locator('.diff [role=status]').innerText(), /^\+\d+ −\d+ lines$/);
      assert.equal(await page.locator('.diff-table').evaluate((t) => t.closest('[aria-live], [role=status], [role=alert], [role=log]') === null), true);
      await screenshot(page, 'history-diff');

      // A link to a revision the entry no longer has (they leave after REGISTRY_MAX_REVISIONS) leads on to the current one.
      await page.goto(`${registry.url}/entries/${ids.invoice}?revision=9`);
      await page.locator('[role=alert]', { hasText: 'NOT_FOUND' }).waitFor();
      // Past the newest, not trimmed: the page says what the registry says, no reason of its own
      // ("old revisions leave it" was added, which nothing trimmed explains).
      const article = await page.locator('article.entry-page').innerText();
      assert.match(article, /has no revision 9: its current revision is 3\./);
      assert.doesNotMatch(article, /old revisions leave it/);
      await page.getByRole('link', { name: 'See the current revision' }).click();
      await page.locator('h1', { hasText: 'Invoice Agent' }).waitFor();
      assert.equal(new URL(page.url()).search, '');
      assert.match((await page.locator('.entry-head').textContent()) ?? '', /Revision3/);
      // One that is no revision number (edited by hand): the current one, said so.
      await page.goto(`${registry.url}/entries/${ids.invoice}?revision=abc`);
      await page.locator('h1', { hasText: 'Invoice Agent' }).waitFor();
      assert.equal(
        await page.locator('.entry-page > .notice[role=status]').innerText({ timeout: 5000 }),
        'This link asks for revision abc, which is not a revision number (1, 2, 3…): the current revision is shown.',
      );
      assert.match((await page.locator('.entry-head').textContent()) ?? '', /Revision3/);

      // So is a comparison link whose revision is no revision number: said so, nothing compared.
      await page.goto(`${registry.url}/entries/${ids.invoice}?from=abc&to=3`);
      const notNumber = page.locator('#history [role=status]', { hasText: 'not a revision number' });
      assert.equal(
        await notNumber.innerText({ timeout: 5000 }),
        'This link compares revision abc, which is not a revision number (1, 2, 3…): nothing is compared. Choose two revisions above and Compare.',
      );
      assert.equal(await page.locator('.diff, [role=alert]').count(), 0);
      // And one that names only one revision (its &to=3 lost when shared).
      await page.goto(`${registry.url}/entries/${ids.invoice}?from=1`);
      assert.equal(
        await page.locator('#history [role=status]', { hasText: 'only one revision' }).innerText({ timeout: 5000 }),
        'This link names only one revision to compare (from=1): nothing is compared. Choose the other above and Compare.',
      );
      assert.equal(await page.locator('#diff-from').inputValue(), '1');

      // A comparison link naming a revision the entry does not have (past its newest, so no
      // trimming explains it): said so, the kept ones offered in the selects (not a blank
      // select), and nothing asked of the registry for it.
      await page.goto(`${registry.url}/entries/${ids.invoice}?from=99&to=3`);
      const notKept = page.locator('#history [role=status]', { hasText: 'not in this entry' });
      await notKept.waitFor();
      assert.equal(await notKept.innerText(), "This link compares revision 99, which is not in this entry's history (its current revision is 3). Choose two of them above and Compare.");
      assert.deepEqual([await page.locator('#diff-from').inputValue(), await page.locator('#diff-to').inputValue()], ['2', '3']);
      assert.equal(await page.locator('.diff, [role=alert]').count(), 0);
      await page.getByRole('button', { name: 'Compare' }).click();
      await page.waitForURL(/from=2&to=3/);
      await page.locator('.diff-summary').waitFor();

      // A shared link opens on the same diff; an older revision says it is not the current one.
      await page.goto(`${registry.url}/entries/${ids.invoice}?revision=2&from=2&to=3`);
      await page.locator('.diff-table').waitFor();
      assert.match((await page.locator('.entry-head').textContent()) ?? '', /not the current one/);
      assert.ok((await page.locator('.line-removed').count()) > 0);

      // More revisions kept than `get` lists (the newest 100): an admin's revisions are exempt
      // from REGISTRY_MAX_REVISIONS. The older ones are not said to be gone: revision 1 opens.
      const admin = await sdkClient(registry.url, { token: TOKENS.admin });
      const card = (v: number) => ({ ...v1Card('Zeppelin Ledger Agent', 'https://zeppelin-ledger.example.org/a2a'), version: `1.0.${v}` });
      const { id } = resultOf(await op(admin, { register: { agentCard: card(1) } }));
      await Promise.all(Array.from({ length: 100 }, (_, i) => op(admin, { register: { agentCard: card(i + 2) } })));
      try {
        await page.goto(`${registry.url}/entries/${id}`);
        await page.locator('#history-h').waitFor();
        assert.equal(await page.locator('table.revisions tbody tr').count(), 100);
        assert.equal(
          await page.locator('#history > p.muted').innerText(),
          'Only the newest 100 revisions are listed; older ones may still be kept: ?revision=N in the address opens revision N.',
        );
        await page.goto(`${registry.url}/entries/${id}?from=1&to=101`);
        assert.equal(
          await page.locator('#history [role=status]', { hasText: 'not listed here' }).innerText({ timeout: 5000 }),
          'This link compares revision 1, which is not listed here (only the newest 100 are, 2–101; an older one may still be kept: ?revision=1 in the address opens it). Choose two of them above and Compare.',
        );
        await page.goto(`${registry.url}/entries/${id}?revision=1`);
        await page.locator('h1', { hasText: 'Zeppelin Ledger Agent' }).waitFor();
        assert.match((await page.locator('.entry-head').textContent()) ?? '', /Revision1 \(not the current one/);
      } finally {
        await op(admin, { unregister: { id } });
      }

      // An older revision of an entry the registry fetches, whose live card no longer validates:
      // its health and drift are the entry's now, compared with the current revision, said so,
      // not "the revision stored here" beside revision 1.
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const fetched: WireJson = v1Card('Kittiwake Revisions Agent', 'https://kittiwake-revisions.example.org/a2a');
      serveCard(origin, fetched, '/kittiwake');
      const { id: kittiwake } = await registerByUrl(alice, `${origin.url}/kittiwake`);
      try {
        serveCard(origin, { ...fetched, version: '2.0.0' }, '/kittiwake');
        assert.equal(resultOf(await op(alice, { refresh: { id: kittiwake } })).revision, 2);
        origin.route('/kittiwake/.well-known/agent-card.json', (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>'));
        await op(alice, { refresh: { id: kittiwake } });
        await page.goto(`${registry.url}/entries/${kittiwake}?revision=1`);
        await page.locator('h1', { hasText: 'Kittiwake Revisions Agent' }).waitFor();
        const facts = await page.locator('.entry-head dl.facts').innerText();
        assert.match(facts, /Health now\s+Invalid live document since /);
        // Where it is fetched from now, as the CLI's get --revision labels it: not revision 1's own.
        assert.match(facts, /Source now\s+http:\/\/127\.0\.0\.1:\d+\/kittiwake/);
        assert.match(facts, /The live document differs from the current revision, 2\./);
        assert.doesNotMatch(facts, /stored here/);
        // So are the header's badges: "Invalid live card" and "Changed live" read as revision 1's.
        const badges = async () => (await page.locator('.entry-head .badges .badge').allInnerTexts()).filter((b) => /live|Reachable/i.test(b));
        assert.deepEqual(await badges(), ['Invalid live card now', 'Live differs from revision 2']);
        assert.match(await page.locator('.entry-head .badges').innerText(), /\(The live document differs from the current revision, 2\)/);
        // The current revision's are as they were.
        await page.goto(`${registry.url}/entries/${kittiwake}`);
        await page.locator('.entry-head dt', { hasText: /^Health$/ }).waitFor();
        assert.deepEqual(await badges(), ['Invalid live card', 'Changed live']);
        assert.doesNotMatch(await page.locator('.entry-head dl.facts').innerText(), /(Source|Health) now|current revision/);
      } finally {
        await op(alice, { unregister: { id: kittiwake } });
      }
    });
  });

  test('keyboard and phone width', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/`);
      await page.locator('.hit').first().waitFor();
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'q');
      await page.keyboard.type('ledger');
      await page.keyboard.press('Enter');
      await page.locator('.hit', { hasText: 'Ledger Agent' }).waitFor();
      await page.waitForFunction(() => document.querySelectorAll('.hit').length === 1);
      // Escape on a control in the open Filters panel closes it, the focus on its summary.
      const filters = page.locator('details.filters');
      assert.equal(await filters.getAttribute('open'), '', 'filters open on a wide screen');
      for (let i = 0; i < 10 && !(await page.evaluate(() => document.activeElement?.closest('.filter-grid') != null)); i++) {
        await page.keyboard.press('Tab');
      }
      await page.keyboard.press('Escape');
      assert.equal(await filters.getAttribute('open'), null, 'Escape closes the filters');
      assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'SUMMARY', 'the focus on the filters\' summary');
      // Tab reaches the result through the form and the filters, and the focus can be seen.
      for (let i = 0; i < 20 && !(await page.evaluate(() => document.activeElement?.closest('.hit') != null)); i++) {
        await page.keyboard.press('Tab');
      }
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Ledger Agent');
      assert.notEqual(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle), 'none', 'a visible focus ring');
      await page.keyboard.press('Enter');
      await page.locator('h1', { hasText: 'Ledger Agent' }).waitFor();
      assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'H1');

      await page.setViewportSize({ width: 360, height: 780 });
      for (const [path, name, ready] of [
        ['/?q=invoice', 'phone-search', '.hit'],
        [`/entries/${ids.files}`, 'phone-entry', '#tools-h'],
        ['/validate', 'phone-validate', '#document'],
      ] as const) {
        await page.goto(`${registry.url}${path}`);
        await page.locator(ready).first().waitFor();
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.equal(overflow, 0, `${path} scrolls sideways on a phone`);
        if (name === 'phone-search') assert.equal(await page.locator('details.filters').getAttribute('open'), null, 'filters fold away on a phone');
        // Safari on iOS zooms the page in on a field whose text is under 16 px when it is tapped (and leaves it so).
        // (Not the file input, kept for screen readers in a 1 px clip: its label is what is tapped.)
        const small = await page.locator('input:not(.visually-hidden):visible, select:visible, textarea:visible').evaluateAll((fields) =>
          fields.filter((f) => parseFloat(getComputedStyle(f).fontSize) < 16).map((f) => `${f.outerHTML.slice(0, 60)}: ${getComputedStyle(f).fontSize}`),
        );
        assert.deepEqual(small, [], `${path}: fields a phone zooms in on`);
        await screenshot(page, name);
      }

      // At 320 px (WCAG's reflow width): the provider's line breaks before its "·", not after it
      // (a dot left alone at a line's end), and the history's revision links ("1", "2") are touch
      // targets of at least 24 × 24 px (WCAG 2.5.8), not the digit's 9 × 17.
      await page.setViewportSize({ width: 320, height: 780 });
      await page.goto(`${registry.url}/entries/${ids.invoice}`);
      const provider = page.locator('.facts dt:text-is("Provider") + dd');
      await provider.waitFor();
      const lines = await provider.evaluate((dd) => {
        const text = [...dd.childNodes].find((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.includes('·'))!;
        const dot = document.createRange();
        dot.setStart(text, text.textContent!.indexOf('·'));
        dot.setEnd(text, text.textContent!.indexOf('·') + 1);
        return { dot: dot.getBoundingClientRect().top, link: dd.querySelector('a')!.getClientRects()[0]!.top, organization: dd.querySelector('bdi')!.getBoundingClientRect().top };
      });
      assert.notEqual(lines.organization, lines.link, 'the provider fits one line: this check checks nothing');
      assert.equal(lines.dot, lines.link, 'the "·" is on the line of the link it introduces');
      for (const box of await page.locator('.revisions a').evaluateAll((links) => links.map((a) => a.getBoundingClientRect()))) {
        assert.ok(box.width >= 24 && box.height >= 24, `a revision link of ${box.width} × ${box.height} px`);
      }
      await screenshot(page, 'phone-320-entry');
      // There a comparison's lines and a tool's schema are wider than the window and scroll inside
      // it: a keyboard reaches them to scroll them (axe's scrollable-region-focusable).
      await page.goto(`${registry.url}/entries/${ids.invoice}?from=1&to=3`);
      await page.locator('.diff-table').waitFor();
      await assertAccessible(page, 'a comparison at 320 px');
      await page.goto(`${registry.url}/entries/${ids.files}`);
      await page.locator('#tools-h').waitFor();
      // This server's schemas are short; a real one's (half the corpus's toolspecs are over 10 KB)
      // scroll inside their 16rem box: each is a Tab stop, as the raw JSON is.
      const schemas = page.locator('section[aria-labelledby=tools-h] pre');
      assert.ok((await schemas.count()) > 0);
      assert.deepEqual(new Set(await schemas.evaluateAll((all) => all.map((pre) => (pre as HTMLElement).tabIndex))), new Set([0]));
      await page.setViewportSize({ width: 360, height: 780 });

      // The dark scheme keeps its contrast too (axe computes the colours as drawn).
      await page.emulateMedia({ colorScheme: 'dark' });
      for (const [path, name, ready] of [
        ['/?q=invoice', 'phone-search-dark', '.hit mark'],
        [`/entries/${ids.invoice}?from=1&to=3`, 'phone-diff-dark', '.diff'],
      ] as const) {
        await page.goto(`${registry.url}${path}`);
        await page.locator(ready).first().waitFor();
        await assertAccessible(page, `${path} in the dark scheme`);
        await screenshot(page, name);
      }
      // Which axe does not measure: the examples in the boxes (placeholders). The browser's own
      // grey, rgb(117, 117, 117), was 3.9:1 on the dark scheme's fields.
      await page.goto(`${registry.url}/`);
      const placeholders = await page.locator('input[placeholder]').evaluateAll((boxes) =>
        boxes.map((box) => ({ box: box.id, text: getComputedStyle(box, '::placeholder').color, field: getComputedStyle(box).backgroundColor })),
      );
      assert.ok(placeholders.length >= 2, JSON.stringify(placeholders));
      for (const { box, text, field } of placeholders) {
        assert.ok(contrast(text, field) >= 4.5, `the placeholder of #${box}: ${text} on ${field} is ${contrast(text, field).toFixed(2)}:1`);
      }

      // Larger text chosen in the browser's settings (not zoom): all of the page's text follows
      // it, the descriptions and labels as the headings do.
      retirePage(page); // the font sizes stay with the page
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Page.setFontSizes', { fontSizes: { standard: 24, fixed: 20 } });
      await page.goto(`${registry.url}/?q=invoice`);
      await page.locator('.hit').first().waitFor();
      const sizes = await page.evaluate(() =>
        Object.fromEntries(['html', 'body', '.hit-description', 'label[for=q]'].map((selector) => [selector, getComputedStyle(document.querySelector(selector)!).fontSize])),
      );
      assert.deepEqual(sizes, { html: '24px', body: '24px', '.hit-description': '24px', 'label[for=q]': '24px' });
      await cdp.detach();
    });
  });

  test('phone width: clearing the last filter leaves the filters open and the focus on the control', async () => {
    await withPage(async (page) => {
      await page.setViewportSize({ width: 375, height: 800 });
      await page.goto(`${registry.url}/?q=invoice`);
      await page.locator('.hit').first().waitFor();
      const filters = page.locator('details.filters');
      assert.equal(await filters.getAttribute('open'), null, 'folded away at first on a phone');
      await filters.locator('summary').click();
      const kind = page.locator('#f-kind');
      await kind.focus();
      await kind.selectOption('agent');
      await page.waitForURL(/kind=agent/);
      await kind.selectOption('');
      await page.waitForURL((url) => !url.search.includes('kind'));
      await page.locator('#result-count', { hasText: /result|match/ }).waitFor();
      assert.equal(await filters.getAttribute('open'), '', 'the filters stay open');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'f-kind', 'the focus stays on the filter');
      await screenshot(page, 'phone-filter-cleared');

      // Folded by the person, they stay folded while the search changes; a shared link with a filter opens them.
      await filters.locator('summary').click();
      await page.locator('#q').fill('ledger');
      await page.waitForURL(/q=ledger/);
      await page.locator('.hit', { hasText: 'Ledger Agent' }).waitFor();
      assert.equal(await filters.getAttribute('open'), null);
      await page.goto(`${registry.url}/?q=ledger&kind=agent`);
      await page.locator('.hit').first().waitFor();
      assert.equal(await filters.getAttribute('open'), '');
    });
  });

  test('right-to-left text (Arabic) reads right to left, in the results and on the entry, beside left-to-right text', async () => {
    const card: WireJson = v1Card('وكيل الفواتير', 'https://rtl-invoices.example.org/a2a');
    // Ends in Latin text and a full stop: laid out left to right, the Arabic sentence's stop lands on the wrong side.
    card.description = 'يترجم الفواتير ويتحقق منها. يدعم PDF.';
    card.skills = [
      { id: 'rtl-translate', name: 'ترجمة الفاتورة', description: 'يترجم فاتورة إلى لغة أخرى.', tags: ['مالية', 'rtl-probe'], examples: ['ترجم هذه الفاتورة إلى الألمانية.'] },
    ];
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const id = resultOf(await op(alice, { register: { agentCard: card } })).id;
    /** Each element's direction as laid out, and whether its text hugs the right edge (right-aligned). */
    const layout = (page: Page, selector: string) =>
      page.locator(selector).evaluateAll((elements) =>
        elements.map((el) => {
          const range = document.createRange();
          range.selectNodeContents(el);
          const text = range.getBoundingClientRect();
          const box = el.getBoundingClientRect();
          return { direction: getComputedStyle(el).direction, right: Math.abs(box.right - parseFloat(getComputedStyle(el).paddingRight) - text.right) < 2 };
        }),
      );
    await withPage(async (page) => {
      await page.goto(`${registry.url}/?tags=rtl-probe,payments`);
      await expectHits(page, ['Ledger Agent', 'وكيل الفواتير']);
      const arabic = page.locator('.hit', { hasText: 'وكيل' });
      assert.deepEqual(await layout(page, `.hit:has(a[href*="${id}"]) :is(h2, .hit-description)`), [
        { direction: 'rtl', right: true },
        { direction: 'rtl', right: true },
      ]);
      assert.deepEqual(await layout(page, '.hit:has(a[href*="' + ids.ledger + '"]) .hit-description'), [{ direction: 'ltr', right: false }]);
      await page.locator('#q').fill('الفاتورة');
      await arabic.locator('.hit-match').waitFor();
      assert.equal(await page.locator('#q').evaluate((el) => getComputedStyle(el).direction), 'rtl', 'an Arabic query is typed right to left');
      assert.equal(await arabic.locator('.hit-match strong').evaluate((el) => getComputedStyle(el).direction), 'rtl');
      await screenshot(page, 'rtl-search');
      // Typed right to left where the person types names: a tag, an MCP server's name and description.
      await page.locator('#f-tags').fill('مالية');
      assert.equal(await page.locator('#f-tags').evaluate((el) => getComputedStyle(el).direction), 'rtl', 'an Arabic tag is typed right to left');
      await page.goto(`${registry.url}/validate`);
      await page.locator('#document').fill('{"tools": []}');
      for (const field of ['#mcp-name', '#mcp-description']) {
        await page.locator(field).fill('خادم الملفات');
        assert.equal(await page.locator(field).evaluate((el) => getComputedStyle(el).direction), 'rtl', field);
      }
      await page.locator('#document').fill('');

      await page.goto(`${registry.url}/entries/${id}`);
      await page.locator('#skills-h').waitFor();
      assert.deepEqual(await layout(page, 'h1, .entry-head .description, #skill-rtl-translate > p:not(.tags), #skill-rtl-translate .examples li'), [
        { direction: 'rtl', right: true },
        { direction: 'rtl', right: true },
        { direction: 'rtl', right: true },
        { direction: 'rtl', right: true },
      ]);
      // The page around it stays left to right.
      assert.equal(await page.locator('#skills-h').evaluate((el) => getComputedStyle(el).direction), 'ltr');
      // An example's bullet sits at its start, the right, inside the skill's card (it stuck out of
      // it, the list indented on the left only), at desktop and phone widths.
      for (const width of [1100, 375]) {
        await page.setViewportSize({ width, height: 800 });
        const bullet = await page.locator('#skill-rtl-translate').evaluate((card) => {
          const list = card.querySelector('.examples')!;
          const item = list.querySelector('li')!;
          const room = card.getBoundingClientRect().right - parseFloat(getComputedStyle(card).paddingRight) - item.getBoundingClientRect().right;
          return { listOverflows: list.scrollWidth > list.clientWidth, cardOverflows: card.scrollWidth > card.clientWidth, roomForBullet: room >= 12 };
        });
        assert.deepEqual(bullet, { listOverflows: false, cardOverflows: false, roomForBullet: true }, `at ${width} px`);
      }
      await screenshot(page, 'rtl-entry');
    });
  });

  test('a very long description takes a few lines in the results, all of it on the entry', async () => {
    const sentence = 'Reconciles shipping manifests against customs declarations and flags every mismatch it finds. ';
    const card: WireJson = v1Card('Manifest Agent', 'https://manifest.example.org/a2a');
    card.description = sentence.repeat(80).trim(); // 7,600 characters, under the document limit
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const id = resultOf(await op(alice, { register: { agentCard: card } })).id;
    await withPage(async (page) => {
      for (const width of [1100, 375]) {
        await page.setViewportSize({ width, height: 800 });
        await page.goto(`${registry.url}/?q=manifests`);
        const description = page.locator(`.hit:has(a[href*="${id}"]) .hit-description`);
        await description.waitFor();
        const { height, lineHeight, text } = await description.evaluate((el) => ({
          height: el.getBoundingClientRect().height,
          lineHeight: parseFloat(getComputedStyle(el).lineHeight),
          text: el.textContent ?? '',
        }));
        assert.ok(height <= 4 * lineHeight + 1, `the description is ${height} px high at ${width} px (${lineHeight} px a line)`);
        assert.equal(text, card.description, 'the whole text is still there for screen readers');
        await screenshot(page, `long-description-${width}`);
      }
      await page.goto(`${registry.url}/entries/${id}`);
      const full = page.locator('.entry-head .description');
      await full.waitFor();
      const lines = await full.evaluate((el) => el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight));
      assert.ok(lines > 20, `the entry shows the whole description (${lines} lines)`);
    });
  });

  test('descriptions written in paragraphs keep their line breaks on the entry (not their indentation); the results show one run', async () => {
    // As real MCP servers write their tools' descriptions (corpus/toolspecs: exa, git, firecrawl).
    const paragraphs = 'Search the web for any topic.\n\n      Best for: finding current news.\n      Returns: clean text.';
    const card: WireJson = v1Card('Paragraph Agent', 'https://paragraph.example.org/a2a');
    card.description = `\n${paragraphs}`;
    card.skills[0].description = paragraphs;
    const spec = toolspec();
    (spec.tools[0] as WireJson).description = paragraphs;
    const bob = await sdkClient(registry.url, { token: TOKENS.bob });
    const agent = resultOf(await op(bob, { register: { agentCard: card } })).id;
    const server = resultOf(await op(bob, { register: { mcpServer: mcpServer('paragraph-files', 'https://mcp.example.org/paragraph/mcp'), toolspec: spec } })).id;
    const shown = 'Search the web for any topic.\n\nBest for: finding current news.\nReturns: clean text.';
    await withPage(async (page) => {
      await page.goto(`${registry.url}/entries/${agent}`);
      await page.locator('.entry-head .description').waitFor();
      assert.equal(await page.locator('.entry-head .description').innerText(), shown);
      assert.equal(await page.locator('.cards .card p.prose').first().innerText(), shown);
      await page.goto(`${registry.url}/entries/${server}`);
      await page.locator('#tools-h').waitFor();
      assert.equal(await page.locator('p.prose', { hasText: 'Search the web' }).innerText(), shown);
      await screenshot(page, 'entry-paragraphs');
      await page.goto(`${registry.url}/?q=paragraph`);
      const summary = page.locator(`.hit:has(a[href*="${agent}"]) .hit-description`);
      await summary.waitFor();
      assert.doesNotMatch(await summary.innerText(), /\n/);
    });
  });

  test('long unbroken words in an entry wrap: no page scrolls sideways, at desktop or phone width', async () => {
    // Words no line can hold, in every field a person reads: the layout must break them, not widen.
    const word = (stem: string, length: number) => stem.repeat(Math.ceil(length / stem.length)).slice(0, length);
    const card: WireJson = v1Card(`Wraparound Agent ${word('Name', 120)}`, 'https://wraparound.example.org/a2a');
    card.description = `Wraparound ${word('Unbroken', 600)} description.`;
    card.defaultInputModes = [`application/${word('x-mode', 120)}`];
    // A binding may be a URI (as real cards declare their MCP or OpenAPI door), shown in a badge.
    card.supportedInterfaces.unshift({
      url: 'https://wraparound.example.org/mcp',
      protocolBinding: 'https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http',
      protocolVersion: '2025-11-25',
    });
    card.skills = [
      {
        id: word('skill-', 100),
        name: `Wrap ${word('Skillname', 150)}`,
        description: `Wraps ${word('Description', 400)}.`,
        tags: ['wraparound', word('tag', 150)],
        examples: [`Wrap ${word('Example', 300)}`],
      },
    ];
    const spec: WireJson = toolspec();
    spec.tools[0].name = `wraparound_${word('tool_', 120)}`;
    spec.tools[0].description = `Wraparound ${word('Tooldescription', 500)}`;
    spec.tools[0].inputSchema.properties = { [word('param_', 120)]: { type: 'string', description: word('Paramdescription', 400) } };
    // Beside them, a tool as most are written: sentences wrap between words, short words stay whole.
    spec.tools[1].inputSchema.properties = {
      path: { type: 'string', description: 'The path of the file to write, relative to the root of the workspace; its folders are made as needed.' },
      overwrite: { type: 'boolean', description: 'Replace a file that is already there (false: refuse, and say so).' },
      mode: { type: ['integer', 'null'], description: 'Unix permission bits, e.g. 420 for rw-r--r--; null keeps the default.' },
    };
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const agent = resultOf(await op(alice, { register: { agentCard: card } })).id;
    const server = resultOf(await op(alice, { register: { mcpServer: mcpServer(`wraparound-${word('server', 120)}`, 'https://wraparound.example.org/mcp'), toolspec: spec } })).id;

    await withPage(async (page) => {
      // 320 px: a phone's narrowest, and 400 % zoom of a 1280 px window (WCAG's reflow width).
      // Each page loaded at the desktop width and at the first phone width, then resized to the
      // next: what is drawn differs only by the stylesheet's widths, except the search's filters,
      // open when loaded wide and folded when loaded narrow. (A load at each width cost a third
      // of the test.)
      for (const [path, ready] of [
        ['/', `.hit a[href*="${agent}"]`],
        ['/?q=wraparound', `.hit a[href*="${server}"]`],
        [`/entries/${agent}`, '#skills-h'],
        [`/entries/${server}`, '#tools-h'],
      ] as const) {
        for (const width of [1200, 360, 320]) {
          await page.setViewportSize({ width, height: 900 });
          if (width !== 320) await page.goto(`${registry.url}${path}`);
          await page.locator(ready).first().waitFor();
          const { scrollWidth, windowWidth, wide, spilling } = await page.evaluate(() => {
            const windowWidth = window.innerWidth;
            // The elements whose text reaches past the window: what to fix when this fails.
            // (No named function in here: the test's compiler would wrap it in a helper the page lacks.)
            const wide = new Set<string>();
            const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            const range = document.createRange();
            for (let node = texts.nextNode(); node && wide.size < 6; node = texts.nextNode()) {
              range.selectNodeContents(node);
              const holder = node.parentElement!;
              if (range.getBoundingClientRect().right > windowWidth) wide.add(`${holder.tagName.toLowerCase()}.${holder.className} in ${holder.parentElement?.tagName.toLowerCase()}.${holder.parentElement?.className}`);
            }
            // What runs past the card (a skill's, a tool's) it is in, though the page may not.
            const spilling: string[] = [];
            for (const card of document.querySelectorAll('.card')) {
              const style = getComputedStyle(card);
              const inner = card.getBoundingClientRect().right - parseFloat(style.borderRightWidth) - parseFloat(style.paddingRight);
              // (Not the column titles kept for screen readers only, in a 1 px clip at phone width.)
              for (const el of card.querySelectorAll(':not(thead, thead *)')) {
                if (el.getBoundingClientRect().right > inner + 0.5) spilling.push(`${el.tagName.toLowerCase()}.${el.className}: ${(el.textContent ?? '').slice(0, 40)}`);
              }
            }
            return { scrollWidth: document.documentElement.scrollWidth, windowWidth, wide: [...wide], spilling };
          });
          assert.ok(scrollWidth <= windowWidth, `${path} at ${width} px: the page is ${scrollWidth} px wide in a ${windowWidth} px window; too wide: ${wide.join(', ')}`);
          assert.deepEqual(spilling, [], `${path} at ${width} px: past the card`);
          if (path !== `/entries/${server}`) continue;
          // The MCP server: its ordinary table keeps short words whole (a column title, a name, a
          // type), however long the words in the table above it; at 320 px too, where its three
          // columns do not fit a card and each parameter is drawn as a block.
          const brokenWords = await page.evaluate(() => {
            const broken: string[] = [];
            const range = document.createRange();
            for (const cell of document.querySelectorAll('#tool-write_file .params :is(thead th, tbody th code, td:nth-child(2) code)')) {
              const text = cell.firstChild!;
              for (const match of (text.textContent ?? '').matchAll(/\S+/g)) {
                range.setStart(text, match.index);
                range.setEnd(text, match.index + match[0].length);
                if (range.getClientRects().length > 1) broken.push(match[0]);
              }
            }
            return broken;
          });
          assert.deepEqual(brokenWords, [], `words broken across lines at ${width} px`);
          await screenshot(page, `long-words-${width}`);
        }
      }
      // The agent's second interface, counted "+1" beside the first: a screen reader hears what it
      // counts ("plus 1" was read, naming nothing).
      await page.goto(`${registry.url}/?q=wraparound`);
      const more = page.locator('.hit', { has: page.locator(`a[href*="${agent}"]`) }).locator('.hit-interface');
      assert.match(await more.innerText(), /\s\+1\b/, 'the eye still sees "+1"');
      const heard = await more.ariaSnapshot();
      assert.match(heard, /1 more interface\b/, heard);
      assert.doesNotMatch(heard, /\+1/, heard);
    });
  });

  test('an entry with 150 tools shows its first 10 at phone width, the others behind a button; a link to a tool, or a search that matched it, shows it; its hit counts the matches it does not list in words; skills fold alike; each card has an id of its own', async () => {
    // Each tool as small as the registry's document limit (10 KB) makes 150 of them: a name and an
    // empty schema. "barometer" in one of them, past the first 10.
    const tools = Array.from({ length: 150 }, (_, i) => ({
      name: `gauge_${String(i).padStart(3, '0')}`,
      ...(i === 137 ? { description: 'Reads the barometer.' } : {}),
      inputSchema: { type: 'object' },
    }));
    const bob = await sdkClient(registry.url, { token: TOKENS.bob });
    const id = resultOf(await op(bob, { register: { mcpServer: mcpServer('turbine-panel', 'https://mcp.example.org/turbine/mcp'), toolspec: { tools } } })).id;
    // An agent with 13 skills, its last 3 the ones a search for "lantern" matches.
    const signals: WireJson = v1Card('Signal Agent', 'https://signal.example.org/a2a');
    signals.skills = Array.from({ length: 13 }, (_, i) => ({ id: `signal-${i}`, name: `Signal ${i}`, description: i >= 10 ? 'Signals with a lantern.' : 'Signals with flags.', tags: ['signals'] }));
    const signalId = resultOf(await op(bob, { register: { agentCard: signals } })).id;
    // Cards whose key cannot name them alone: a duplicate tool name or skill id (a warning, not refused).
    const twice = (name: string) => ({ name, description: `Reads the ${name} twice.`, inputSchema: { type: 'object' } });
    const twinServer = resultOf(await op(bob, { register: { mcpServer: mcpServer('twin-tools', 'https://mcp.example.org/twins/mcp'), toolspec: { tools: [twice('echo'), twice('mirror'), twice('echo')] } } })).id;
    const twins: WireJson = v1Card('Twin Agent', 'https://twins.example.org/a2a');
    twins.skills = [1, 2].map((i) => ({ id: 'echo', name: `Echo ${i}`, description: 'Echoes.', tags: ['echo'] }));
    const twinAgent = resultOf(await op(bob, { register: { agentCard: twins } })).id;
    await withPage(async (page) => {
      await page.setViewportSize({ width: 390, height: 844 });
      const cards = page.locator('section[aria-labelledby=tools-h] .cards > li');
      const note = page.locator('.folded-cards > span');
      const inView = (anchor: string) => page.locator(`#${anchor}`).evaluate((el) => el.getBoundingClientRect().top >= 0 && el.getBoundingClientRect().bottom <= innerHeight);

      // A link to a tool past the first 10: the first 10 are drawn and that one, in view.
      await page.goto(`${registry.url}/entries/${id}#tool-gauge_120`);
      await page.locator('#tool-gauge_120').waitFor();
      assert.deepEqual(await cards.evaluateAll((li) => li.slice(9).map((el) => el.id)), ['tool-gauge_009', 'tool-gauge_120']);
      assert.equal(await note.innerText(), 'Showing the first 10 of 150 tools, and the one this link points to.');
      assert.ok(await inView('tool-gauge_120'), 'the linked tool is scrolled to');
      // The page is bounded at phone width: drawn whole it was over 30,000 px tall.
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      assert.ok(height < 6000, `the page is ${height} px tall at 390 px`);
      await screenshot(page, 'folded-tools-390');
      // The fragment changed in place (a link on the page, or typed): the tool it names now.
      await page.evaluate(() => (window.location.hash = 'tool-gauge_140'));
      await page.locator('#tool-gauge_140').waitFor();
      assert.deepEqual(await cards.evaluateAll((li) => li.slice(9).map((el) => el.id)), ['tool-gauge_009', 'tool-gauge_140']);
      assert.ok(await inView('tool-gauge_140'), 'the linked tool is scrolled to');
      // By the keyboard: the button shows them all, and the focus goes to the first one it revealed.
      const showAll = page.getByRole('button', { name: 'Show all 150 tools', exact: true });
      await showAll.focus();
      await page.keyboard.press('Enter');
      await cards.nth(149).waitFor();
      assert.equal(await cards.count(), 150);
      assert.equal(await showAll.count(), 0, 'the button goes with the fold');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'tool-gauge_010');

      // A search that matched a tool past the first 10: its entry shows it among the first.
      await page.goto(`${registry.url}/?q=barometer`);
      await page.getByRole('link', { name: 'turbine-panel' }).click();
      await page.locator('#tool-gauge_137').waitFor();
      assert.equal(await cards.count(), 11);
      assert.equal(await note.innerText(), 'Showing the first 10 of 150 tools, and 1 matched by the search.');
      // The link says what matched, so the entry opened anew (a reload, a new tab, a link shared) shows it too.
      assert.deepEqual(new URL(page.url()).searchParams.getAll('matched'), ['tool-gauge_137']);
      await page.reload();
      await page.locator('#tool-gauge_137').waitFor();
      assert.equal(await cards.count(), 11);

      // A hit with more matches than it lists says how many more in words: "(+139 more)" was read aloud "plus 139 more".
      await page.goto(`${registry.url}/?q=gauge`);
      const line = page.locator('.hit', { has: page.locator(`a[href*="${id}"]`) }).locator('.hit-match');
      await line.waitFor();
      assert.match(await line.innerText(), /; also tool gauge_\d+(, tool gauge_\d+){9} and 139 more$/);
      const heard = await line.ariaSnapshot();
      assert.match(heard, /and 139 more/, heard);
      assert.doesNotMatch(heard, /\+/, heard);

      // Skills fold too, and a search that matched every skill past the first 10 leaves nothing
      // folded: no button that shows nothing more.
      await page.locator('#q').fill('lantern');
      await page.getByRole('link', { name: 'Signal Agent' }).click();
      const skills = page.locator('section[aria-labelledby=skills-h] .cards > li');
      await page.locator('#skill-signal-12').waitFor();
      assert.equal(await skills.count(), 13);
      assert.equal(await page.locator('.folded-cards').count(), 0);
      // Opened by a plain link, no search: the skills fold as the tools do, and their button shows
      // the rest and moves the focus to the first it revealed.
      await page.goto(`${registry.url}/entries/${signalId}`);
      await page.locator('#skill-signal-9').waitFor();
      assert.equal(await skills.count(), 10);
      assert.equal(await note.innerText(), 'Showing the first 10 of 13 skills.');
      await page.getByRole('button', { name: 'Show all 13 skills', exact: true }).click();
      await page.locator('#skill-signal-12').waitFor();
      assert.equal(await skills.count(), 13);
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'skill-signal-10');

      // Every card has an id of its own (a link's target, a label's): one whose key an earlier card
      // has, or that has none, gets its place in the list, "tools-3".
      const duplicateIds = () => {
        const seen = new Set<string>();
        return [...document.querySelectorAll('[id]')].map((el) => el.id).filter((id) => seen.has(id) || !seen.add(id));
      };
      await page.goto(`${registry.url}/entries/${twinServer}#tools-3`);
      await page.locator('#tools-3').waitFor();
      assert.deepEqual(await cards.evaluateAll((li) => li.map((el) => el.id)), ['tool-echo', 'tool-mirror', 'tools-3']);
      assert.deepEqual(await page.evaluate(duplicateIds), []);
      await page.goto(`${registry.url}/entries/${twinAgent}`);
      await page.locator('#skills-2').waitFor();
      assert.deepEqual(await skills.evaluateAll((li) => li.map((el) => el.id)), ['skill-echo', 'skills-2']);
      assert.deepEqual(await page.evaluate(duplicateIds), []);
      // A tool with no name: the registry refuses one, but the page reads every document as
      // untrusted (stored before the rule); all of them had the id "tool-unnamed".
      assert.deepEqual(cardAnchors('tool', ['read', undefined, 'read', undefined, 'tools-2']), ['tool-read', 'tools-2', 'tools-3', 'tools-4', 'tool-tools-2']);
    });
  });
});
