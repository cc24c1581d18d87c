/**
 * The web page in a real browser (Debian's Chromium driven by playwright-core) against a real
 * registry on 127.0.0.1: search as you type, filters, paging, an entry's page, comparing
 * revisions, validating a broken card and registering one. Each test saves a screenshot under
 * test-output/screenshots. Plus the HTTP side: content negotiation at the page's paths, the
 * page's content security policy, the assets and their size.
 *
 * One registry and one browser for the whole file; the page's assets are built first, so the
 * test runs against the current sources.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Page, Route } from 'playwright-core';
import { request } from 'undici';
import { buildWebAssets, FIRST_PAGE_BUDGET_BYTES, type WebBuildResult } from '../web/build.js';
import { ANSWER_DEADLINE_MS } from '../web/src/deadline.js';
import { PAGE_CONTENT_SECURITY_POLICY } from '../src/http/security.js';
import { accessibilityViolations, browserUnavailable, launchBrowser, screenshot, type TestBrowser, type WatchedPage } from './support/browser.js';
import { dataPart, filePart, op, resultOf, sdkClient, send, type WireJson } from './support/client.js';
import { mcpServer, toolspec, v03Card, v1Card } from './support/documents.js';
import { removeTempDir, startTestRegistry, tempDir, TOKENS, type TestRegistry } from './support/registry.js';
import { signCard } from '../src/trust/card-signing.js';
import { generateSigningKey, parseSigningKey } from '../src/trust/jwks.js';
import { ACCEPTED_ALGORITHMS } from '../src/validation/signature.js';
import { serveCard } from './support/freshness.js';
import { startOrigin, type OriginServer } from './support/origin-server.js';
import { freePort } from './support/ports.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const FILLERS = 22;

function securedCard() {
  const card: WireJson = v1Card('Ledger Agent', 'https://ledger.example.org/a2a');
  card.description = 'Keeps a ledger of payments.';
  card.skills = [
    { id: 'record-payment', name: 'Record payment', description: 'Records a payment in the ledger.', tags: ['payments', 'bookkeeping'], examples: ['Record 40 EUR paid to ACME'] },
  ];
  card.securitySchemes = {
    bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT', description: 'A token from the ledger service.' } },
    oauth: {
      oauth2SecurityScheme: {
        flows: { clientCredentials: { tokenUrl: 'https://auth.example.org/token', scopes: { 'ledger:read': 'read', 'ledger:write': 'write' } } },
      },
    },
  };
  card.securityRequirements = [{ schemes: { bearer: { list: [] } } }, { schemes: { oauth: { list: ['ledger:read'] } } }];
  return card;
}

/** Agents enough for two pages of results, matching nothing the other tests search for. */
function fillerCard(i: number) {
  const card: WireJson = v1Card(`Filler Agent ${String(i).padStart(2, '0')}`, `https://filler-${i}.example.org/a2a`);
  // "filler" only in the name: one hit per entry, with or without results per entry.
  card.description = `Agent number ${i}, for paging.`;
  card.skills = [{ id: 'fill', name: 'Fill a page', description: 'Fills a page of results.', tags: ['paging'] }];
  return card;
}

const brokenCard = () => {
  const card: WireJson = v1Card('Broken Agent', 'https://broken.example.org/a2a');
  card.skills[0].tags = 'finance';
  delete card.version;
  return JSON.stringify(card, null, 2);
};

/**
 * The page's timers of `ms` (setTimeout) wait until the test releases them (releaseTimers with the
 * same `name`) instead of running out on their own; every other timer runs as it does. For this
 * page only: the clock Playwright offers is the whole browser's, which the other tests share.
 */
async function holdTimers(page: Page, ms: number, name: string) {
  await page.addInitScript(
    ([heldMs, releaseName]) => {
      const realSet = window.setTimeout.bind(window);
      const realClear = window.clearTimeout.bind(window);
      const due = new Map<number, () => void>();
      let nextId = 1e9 + heldMs * 1e3;
      window.setTimeout = ((fn: (...args: unknown[]) => void, timeout?: number, ...args: unknown[]) => {
        if (timeout !== heldMs) return realSet(fn, timeout, ...args);
        const id = nextId++;
        due.set(id, () => fn(...args));
        return id;
      }) as typeof window.setTimeout;
      window.clearTimeout = ((id?: number) => {
        if (id === undefined || !due.delete(id)) realClear(id);
      }) as typeof window.clearTimeout;
      Object.assign(window, {
        [releaseName]() {
          const fns = [...due.values()];
          due.clear();
          for (const fn of fns) fn();
        },
      });
    },
    [ms, name] as const,
  );
}

/** The timers held by holdTimers(page, ms, name) run now; resolves once they have. */
const releaseTimers = (page: Page, name: string) => page.evaluate((n) => (window as unknown as Record<string, () => void>)[n]!(), name);

/** The page's deadline timers (ANSWER_DEADLINE_MS) wait for passDeadlines instead of 20 s. */
const passDeadlinesOnDemand = (page: Page) => holdTimers(page, ANSWER_DEADLINE_MS, 'passDeadlines');

/** The deadlines of the requests in flight pass now (see passDeadlinesOnDemand). */
const passDeadlines = (page: Page) => releaseTimers(page, 'passDeadlines');

/** The search box's typing pause (web/src/pages/search.tsx), after which the URL follows the words. */
const TYPING_PAUSE_MS = 250;

const unavailable = browserUnavailable();

describe('web page', { skip: unavailable }, () => {
  let registry: TestRegistry;
  let browser: TestBrowser;
  let build: WebBuildResult;
  let origin: OriginServer;
  const ids: Record<string, string> = {};
  const trustDir = tempDir('a2a-registry-web-trust-');

  before(async () => {
    build = await buildWebAssets();
    // Agents registered by URL from a server on 127.0.0.1, for health (the health filter and facts).
    origin = await startOrigin();
    // A trust root, so a signed card can be verified (the verified filter and the signature facts).
    const trustKey = await generateSigningKey('ES256', 'web-trusted');
    fs.writeFileSync(path.join(trustDir, 'jwks.json'), JSON.stringify({ keys: [trustKey.publicJwk] }));
    registry = await startTestRegistry({ REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_TRUSTED_KEYS: path.join(trustDir, 'jwks.json') });
    const signer = await parseSigningKey(trustKey.privateJwk, 'web-trusted', ACCEPTED_ALGORITHMS);
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const bob = await sdkClient(registry.url, { token: TOKENS.bob });
    const admin = await sdkClient(registry.url, { token: TOKENS.admin });

    // Invoice Agent: three revisions, for the history.
    const card: WireJson = v1Card('Invoice Agent', 'https://invoices.example.org/a2a');
    card.provider = { organization: 'Invoice Works International Ltd', url: 'https://invoice-works.example.org/about' };
    ids.invoice = resultOf(await op(alice, { register: { agentCard: card } })).id;
    card.description = 'Translates, checks and files invoices.';
    await op(alice, { register: { agentCard: card } });
    card.skills[0].tags.push('receipts');
    card.version = '1.3.0';
    await op(alice, { register: { agentCard: card } });

    ids.weather = resultOf(await op(bob, { register: { agentCard: v03Card() } })).id;
    ids.files = resultOf(await op(bob, { register: { mcpServer: mcpServer(), toolspec: toolspec() } })).id;
    // Words the search finds beyond letters: an emoji, vowel signs, Thai without spaces, C++.
    const nimbus: WireJson = v1Card('🌤️ Nimbus', 'https://nimbus.example.org/a2a');
    nimbus.description = 'किताबों का अनुवाद; พยากรณ์อากาศรายวัน; C++ notes.';
    nimbus.skills = [{ id: 'sky', name: 'Sky notes', description: 'Notes on the sky.', tags: ['sky'] }];
    ids.nimbus = resultOf(await op(bob, { register: { agentCard: nimbus } })).id;
    ids.ledger = resultOf(await op(bob, { register: { agentCard: await signCard(securedCard(), signer) } })).id;
    for (const [key, name] of [['beacon', 'Harbour Beacon Agent'], ['lighthouse', 'Harbour Lighthouse Agent']] as const) {
      const card: WireJson = v1Card(name, `https://${key}.example.org/a2a`);
      // Words of their own: other tests' searches do not find them.
      card.description = `The ${key} of the harbour.`;
      card.skills = [{ id: 'guide', name: 'Guide ships', description: 'Guides ships into the harbour.', tags: ['harbour'] }];
      serveCard(origin, card, `/${key}`);
      ids[key] = resultOf(await op(alice, { register: { url: `${origin.url}/${key}` } })).id;
    }
    // The lighthouse goes dark: its next check finds nothing.
    origin.route('/lighthouse/.well-known/agent-card.json', (_req, res) => void res.writeHead(503).end());
    await op(alice, { refresh: { id: ids.lighthouse } });
    for (let i = 0; i < FILLERS; i++) {
      await op(admin, { register: { agentCard: fillerCard(i) } });
    }
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await registry?.close();
    await origin?.close();
    removeTempDir(trustDir);
  });

  /** A fresh page; at the end of the test nothing went wrong in it (console errors, exceptions, CSP refusals). */
  async function withPage<T>(fn: (page: WatchedPage) => Promise<T>): Promise<T> {
    const page = await browser.newPage();
    try {
      const result = await fn(page);
      assert.deepEqual(page.problems, [], 'the page logged errors');
      return result;
    } finally {
      await page.close();
    }
  }

  /**
   * A real reverse proxy on 127.0.0.1 in front of the registry: `answer` takes each A2A call
   * (message:send) it wants to answer itself (returns true); everything else passes through.
   */
  async function startProxy(answer: (res: http.ServerResponse) => boolean): Promise<{ url: string; close(): Promise<void> }> {
    const proxy = http.createServer((req, res) => {
      if (req.url?.endsWith('/a2a/rest/message:send') && answer(res)) {
        req.resume();
        return;
      }
      const upstream = http.request(`${registry.url}${req.url}`, { method: req.method, headers: req.headers }, (passed) => {
        res.writeHead(passed.statusCode ?? 502, passed.headers);
        passed.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      close: () =>
        new Promise<void>((resolve) => {
          proxy.close(() => resolve());
          proxy.closeAllConnections();
        }),
    };
  }

  /**
   * Live regions inside another (a screen reader says what is put in them twice: once for each),
   * but a notice's countdown, in its alert from the start and said with it.
   */
  async function assertNoNestedLiveRegions(page: Page, what: string) {
    const nested = await page.evaluate((live) => {
      const inner = [...document.querySelectorAll(live)].filter((el) => el.parentElement?.closest(live) && !el.matches('.notice.error > [role=status]'));
      return inner.map((el) => `${el.outerHTML.slice(0, 60)} in ${el.parentElement!.closest(live)!.outerHTML.slice(0, 60)}`);
    }, '[aria-live], [role=status], [role=alert], [role=log]');
    assert.deepEqual(nested, [], `live regions inside live regions on ${what}`);
  }

  async function assertAccessible(page: Page, what: string) {
    const violations = await accessibilityViolations(page);
    assert.deepEqual(violations, [], `accessibility violations on ${what}: ${JSON.stringify(violations, null, 2)}`);
  }

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
      for (const path of ['/nonsense', '/entries/x/y', '/entries/', '/entries/%ff']) {
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
        assert.equal(((await api.json()) as WireJson).error.status, code);
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

    test('assets: hashed, immutable, compressed (by the build, not at each start), revalidated; the first page is under its budget', async (t) => {
      for (const file of build.manifest.files) {
        const res = await fetch(`${registry.url}/assets/${file}`, { headers: { 'accept-encoding': 'identity' } });
        assert.equal(res.status, 200, file);
        assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
        assert.equal(res.headers.get('content-encoding'), null);
        const etag = res.headers.get('etag')!;
        const body = Buffer.from(await res.arrayBuffer());
        const again = await fetch(`${registry.url}/assets/${file}`, { headers: { 'if-none-match': etag } });
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
      await page.locator('#q').pressSequentially('invoice', { delay: 40 });
      await page.waitForURL(/\?q=invoice$/);
      await page.locator('.hit', { hasText: 'Invoice Agent' }).waitFor();
      assert.ok(searches.length - before <= 2, `typing 7 characters sent ${searches.length - before} searches`);
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
      await page.locator('#q').fill('weather');
      await page.locator('.hit', { hasText: 'Weather Agent' }).waitFor();
      assert.equal(await refusal.count(), 0);

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

      // A slow answer (the browser's own network emulation, a second of latency): the results
      // still shown are the last search's, and the page says so instead of passing them off as
      // the answer to the words now in the box.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 1000, downloadThroughput: -1, uploadThroughput: -1 });
      await page.locator('#q').fill('ledger');
      await page.locator('#result-count', { hasText: 'Searching…' }).waitFor();
      assert.equal(await page.locator('.results').getAttribute('aria-busy'), 'true');
      assert.equal(await page.locator('.results.stale .hit', { hasText: 'Weather Agent' }).count(), 1, 'the last results, drawn as such');
      await page.locator('.hit', { hasText: 'Ledger Agent' }).waitFor();
      assert.match(await page.locator('#result-count').innerText(), /result|match/);
      assert.equal(await page.locator('.results').getAttribute('aria-busy'), 'false');
      assert.equal(await page.locator('.results.stale').count(), 0);
      await cdp.detach();
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
      await releaseTimers(page, 'endTypingPause'); // the pause ends after Back: nothing rewrites the URL
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
      assert.equal(await page.locator('#f-kind').inputValue(), 'agent', 'the other filters stay');
      await screenshot(page, 'filter-verified');
      await page.getByRole('link', { name: 'Ledger Agent' }).click();
      await page.locator('h1', { hasText: 'Ledger Agent' }).waitFor();
      assert.match((await page.locator('dd.signatures').textContent()) ?? '', /verified\s*ES256\s*key web-trusted/);
      await screenshot(page, 'entry-signed');
      await page.goto(`${registry.url}/entries/${ids.invoice}`);
      await page.locator('h1', { hasText: 'Invoice Agent' }).waitFor();
      assert.equal(await page.locator('dd.signatures').textContent(), 'The card is not signed.');
      assert.equal(await page.locator('.entry-head .badge', { hasText: 'Verified' }).count(), 0);
    });
  });

  test('an entry: the card for people, interfaces with copy buttons, security, owner, raw JSON; an MCP server with its tool hints', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/?q=invoice`);
      await page.getByRole('link', { name: 'Invoice Agent' }).click();
      await page.waitForURL(new RegExp(`/entries/${ids.invoice}$`));
      const h1 = page.locator('h1');
      await h1.filter({ hasText: 'Invoice Agent' }).waitFor();
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

      await page.goto(`${registry.url}/entries/${ids.ledger}`);
      await page.locator('#security-h').waitFor();
      const security = (await page.locator('section', { has: page.locator('#security-h') }).textContent()) ?? '';
      for (const expected of ['HTTP authentication', 'Bearer', 'JWT', 'OAuth 2.0', 'https://auth.example.org/token', 'ledger:read', 'oauth (ledger:read)']) {
        assert.ok(security.includes(expected), `security shows "${expected}"`);
      }

      await page.goto(`${registry.url}/entries/${ids.files}`);
      await page.locator('#tools-h').waitFor();
      const read = page.locator('#tool-read_file');
      assert.deepEqual(await read.locator('.hints li').allTextContents(), ['Read-only', 'Not idempotent (default)', 'Open world (default)']);
      const write = page.locator('#tool-write_file');
      assert.deepEqual(await write.locator('.hints li').allTextContents(), [
        'May modify its environment (default)',
        'Destructive (default)',
        'Not idempotent (default)',
        'Open world (default)',
      ]);
      assert.match((await read.locator('table.params').textContent()) ?? '', /path.*required.*string/);
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

      // A comparison link naming a revision no longer kept: said so, the kept ones offered in the
      // selects (not a blank select), and nothing asked of the registry for it.
      await page.goto(`${registry.url}/entries/${ids.invoice}?from=99&to=3`);
      const notKept = page.locator('#history [role=status]', { hasText: 'not in this entry' });
      await notKept.waitFor();
      assert.equal(await notKept.innerText(), "This link compares revision 99, which is not in this entry's history (old revisions leave it; it keeps revisions 1–3). Choose two of them above and Compare.");
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
    });
  });

  test('validate: a broken card gets the registry\'s errors, with paths and hints, marked in the document', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/validate`);
      const text = brokenCard();
      await page.locator('#document').fill(text);
      await page.getByRole('button', { name: 'Validate', exact: true }).click();
      await page.locator('.problems').waitFor();

      // The same findings the registry gives any A2A client for this document.
      const direct = await send(await sdkClient(registry.url), [dataPart({ validate: {} }), filePart(text, 'agent-card.json')]);
      const expected = (direct.status.message.parts.find((p: WireJson) => p.data).data.error.details as WireJson[]).map((d) => `${d.path} ${d.message}`);
      const shown = await page.locator('.problems li').evaluateAll((items) =>
        items.map((li) => `${li.querySelector('.path')?.textContent} ${li.querySelector('.message')?.textContent}`),
      );
      assert.deepEqual(shown, expected);
      const tags = page.locator('.problems li', { hasText: '/skills/0/tags' });
      assert.match((await tags.locator('.hint').textContent()) ?? '', /array of strings/);

      // Marked where it is: the tags line, and the document (the missing version) at its top.
      const marks = await page.locator('.doc mark').allTextContents();
      assert.ok(marks.some((m) => m.includes('"tags": "finance"')), marks.join(' | '));
      await tags.getByRole('link', { name: 'Show in the document' }).click();
      const target = await page.evaluate(() => document.querySelector(':target')?.closest('tr')?.textContent ?? '');
      assert.match(target, /"tags": "finance"/);
      // And back, by the keyboard: Enter on the mark (focused on arrival) puts the focus on its problem.
      assert.equal(await page.evaluate(() => document.activeElement === document.querySelector(':target')), true, 'the mark has the focus');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.activeElement?.matches('.problems li:target') === true, undefined, { timeout: 5000 });
      assert.match(await page.evaluate(() => document.activeElement?.textContent ?? ''), /\/skills\/0\/tags/);
      await screenshot(page, 'validate-errors');
      await assertAccessible(page, 'the validate page with errors');
      // A screen reader hears the outcome (not valid, and why), not the whole list and document
      // read out at once: those are outside any live region, read when the person reaches them.
      const live = '[aria-live], [role=status], [role=alert], [role=log]';
      assert.match(await page.locator('.validation-summary').innerText(), /^Not valid VALIDATION_FAILED\s+The A2A v1\.0 agent card is not valid/);
      assert.equal(await page.locator('.validation-summary > [role=alert]').count(), 1, 'the outcome is a live region');
      await assertNoNestedLiveRegions(page, 'the validate page with errors');
      for (const part of ['.problems', '.doc']) {
        assert.equal(await page.locator(part).evaluate((el, live) => el.closest(live) === null, live), true, `${part} is in a live region`);
      }

      // Listed in the order of the document, not the registry's (its schema's: /capabilities first).
      const { supportedInterfaces, skills, ...rest } = v1Card('Shuffled Agent', 'https://shuffled.example.org/a2a');
      (skills[0] as WireJson).tags = 'finance';
      const shuffled = JSON.stringify({ supportedInterfaces, skills, ...rest, capabilities: 'streaming' }, null, 2);
      await page.locator('#document').fill(shuffled);
      await page.locator('#document').press('Control+Enter');
      await page.locator('.problems li', { hasText: '/capabilities' }).waitFor({ timeout: 5000 });
      const paths = () => page.locator('.problems .path').allTextContents();
      assert.deepEqual(await paths(), ['/skills/0/tags', '/capabilities']);
      const registryOrder = await send(await sdkClient(registry.url), [dataPart({ validate: {} }), filePart(shuffled, 'agent-card.json')]);
      const registryPaths = (registryOrder.status.message.parts.find((p: WireJson) => p.data).data.error.details as WireJson[]).map((d) => d.path);
      assert.deepEqual(registryPaths, ['/capabilities', '/skills/0/tags'], 'the registry lists them otherwise: this check checks nothing');

      // Broken JSON, dropped as a file: the registry says it is not JSON; the page shows where the parser stopped.
      const dropped = await page.evaluateHandle((text) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], 'agent-card.json', { type: 'application/json' }));
        return transfer;
      }, '{\n  "name": "x",\n  "version": 1,,\n}');
      await page.locator('.drop-zone').dispatchEvent('drop', { dataTransfer: dropped });
      await page.waitForFunction(() => (document.querySelector('#document') as HTMLTextAreaElement).value.includes('1,,'));
      await page.locator('.problems .note').waitFor();
      assert.match((await page.locator('.problems').textContent()) ?? '', /not valid JSON.*line 3, column 16/s);
      assert.equal(await page.locator('.doc tr.has-error .ln').textContent(), '3');
      await screenshot(page, 'validate-syntax');

      // A tab pasted into a string: the page says the tab's place, as the registry's message does (not the string's opening quote).
      await page.locator('#document').fill('{\n  "name": "Tab\tAgent"\n}');
      await page.locator('#document').press('Control+Enter');
      await page.locator('.problems .note', { hasText: 'invalid character' }).waitFor({ timeout: 5000 });
      assert.match(await page.locator('.validation-summary').innerText(), /line 2 column 15/);
      assert.match(await page.locator('.problems .note').innerText(), /invalid character at line 2, column 15/);

      // A toolspec: detected, its problems (the registry's paths under /toolspec) said and placed
      // in the pasted text: paths into it, in the list and in the summary's words alike.
      const spec = toolspec();
      (spec.tools[1] as WireJson).inputSchema = { type: 'array' };
      await page.locator('#document').fill(JSON.stringify(spec, null, 2));
      await page.locator('#mcp-name').waitFor();
      await page.locator('#document').press('Control+Enter');
      await page.locator('.problems').waitFor();
      const shownFindings = () => page.locator('.problems li').evaluateAll((items) => items.map((li) => `${li.querySelector('.path')?.textContent} ${li.querySelector('.message')?.textContent}`));
      assert.deepEqual(await shownFindings(), ['/tools/1/inputSchema/type must be "object"; found "array"']);
      // Of the toolspec pasted, as the CLI's validate says it, not of an "MCP server registration".
      assert.match(await page.locator('.validation-summary').innerText(), /The toolspec is not valid \(1 error\)\. \/tools\/1\/inputSchema\/type: must be "object"/);
      assert.doesNotMatch(await page.locator('.validation-result').innerText(), /\/toolspec/);
      assert.ok((await page.locator('.doc mark').allTextContents()).some((m) => m.includes('"type": "array"')));
      // Its warnings too, a path in their words among them.
      spec.tools[1] = { ...toolspec().tools[1], name: spec.tools[0].name };
      await page.locator('#document').fill(JSON.stringify(spec, null, 2));
      await page.locator('#document').press('Control+Enter');
      await page.locator('.problems li.warning').waitFor({ timeout: 5000 });
      assert.deepEqual(await shownFindings(), ['/tools/1/name tool name "read_file" is already used by /tools/0']);
      assert.doesNotMatch(await page.locator('.validation-result').innerText(), /\/toolspec/);
      // A server with its toolspec ({"mcpServer", "toolspec"}) is said as such, the size the
      // registry gives being its toolspec's (its limit is per document), not the text pasted.
      await page.locator('#document').fill(JSON.stringify({ mcpServer: mcpServer(), toolspec: toolspec() }, null, 2));
      await page.locator('#document').press('Control+Enter');
      const valid = page.locator('.validation-summary .notice.ok');
      await valid.waitFor({ timeout: 5000 });
      const said = /^Valid\. An MCP server and its ([\d,]+)-byte toolspec(, with \d+ warnings?)?\.$/.exec(await valid.innerText());
      assert.equal(said?.[1]?.replace(/,/g, ''), String(JSON.stringify(toolspec()).length), await valid.innerText());
      await screenshot(page, 'validate-toolspec');

      // A toolspec whose tools are not a list is still a toolspec: the toolspec's error, placed at its tools.
      await page.locator('#document').fill('{"tools": "x"}');
      assert.match(await page.locator('.validate-form').innerText(), /This looks like an MCP toolspec/);
      await page.locator('#document').press('Control+Enter');
      await page.locator('.problems li', { hasText: /^error \/tools / }).waitFor({ timeout: 5000 });
      assert.doesNotMatch((await page.locator('.problems').textContent()) ?? '', /supportedInterfaces|skills/);
      assert.ok((await page.locator('.doc mark').allTextContents()).some((m) => m.includes('"x"')));

      // Nested thousands deep: the registry's refusal is shown (listed, unmarked), not a page
      // stuck at "Validating…" (marking it overflowed the stack of the page's JSON parser).
      await page.locator('#document').fill(`${'['.repeat(5000)}${']'.repeat(5000)}`);
      await page.locator('#document').press('Control+Enter');
      await page.locator('.problems li', { hasText: 'nested deeper than' }).waitFor({ timeout: 5000 });
      assert.equal(await page.getByRole('button', { name: 'Validate', exact: true }).isEnabled(), true);
    });
  });

  test('register: with a token typed by the person, kept in session storage only', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/validate`);
      const card = v1Card('Fresh Page Agent', 'https://fresh.example.org/a2a');
      await page.locator('#document').fill(JSON.stringify(card, null, 2));
      await page.getByRole('button', { name: 'Validate', exact: true }).click();
      await page.locator('.notice.ok', { hasText: 'Valid.' }).waitFor();
      assert.match((await page.locator('.validation-result').textContent()) ?? '', /A2A v1\.0 agent card/);

      await page.locator('#token').fill('not-a-real-token-0123456789');
      await page.getByRole('button', { name: 'Register' }).click();
      await page.locator('[role=alert]', { hasText: 'UNAUTHENTICATED' }).waitFor();
      page.problems.length = 0; // the browser logs the refused request (401) itself
      // Not kept: Search would send it with every read, and be refused with it.
      assert.equal(await page.evaluate(() => sessionStorage.getItem('a2a-registry.token')), null);

      await page.locator('#token').fill(TOKENS.alice);
      await page.getByRole('button', { name: 'Register' }).click();
      await page.locator('.notice.ok', { hasText: 'Registered.' }).waitFor();
      assert.equal(await page.evaluate(() => sessionStorage.getItem('a2a-registry.token')), TOKENS.alice);
      assert.equal(await page.evaluate(() => localStorage.length), 0);
      assert.ok(!(await browser.context.cookies()).length, 'no cookie');
      await screenshot(page, 'registered');

      await page.getByRole('link', { name: 'Open the entry' }).click();
      await page.locator('h1', { hasText: 'Fresh Page Agent' }).waitFor();
      assert.match((await page.locator('.entry-head').textContent()) ?? '', /Owneralice/);

      // The token stays for this tab only: a reload keeps it, the person can forget it.
      await page.goto(`${registry.url}/validate`);
      assert.equal(await page.locator('#token').inputValue(), TOKENS.alice);
      await page.getByRole('button', { name: 'Forget token' }).click();
      assert.equal(await page.evaluate(() => sessionStorage.getItem('a2a-registry.token')), null);
      // The button is gone with the token: the focus is in the emptied field, not on the page's top.
      await page.waitForFunction(() => document.activeElement?.id === 'token', undefined, { timeout: 5000 });

      // A toolspec registers with the server fields.
      await page.locator('#document').fill(JSON.stringify(toolspec()));
      await page.locator('#mcp-name').fill('page-files');
      await page.locator('#mcp-url').fill('https://mcp.example.org/page-files/mcp');
      await page.locator('#token').fill(TOKENS.bob);
      await page.getByRole('button', { name: 'Register' }).click();
      await page.locator('.notice.ok', { hasText: 'Registered.' }).waitFor();
      await screenshot(page, 'registered-toolspec');
    });
  });

  test('validate: a finding\'s message, note, hint and where to look are separate pieces, on screen and in the text', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/validate`);
      await page.locator('#document').fill(brokenCard());
      await page.getByRole('button', { name: 'Validate', exact: true }).click();
      await page.locator('.problems li').first().waitFor();
      const card = await problemPieces(page);
      assert.ok(card.some((p) => p.where === 'Show in the document' && p.hint), JSON.stringify(card));

      // A toolspec with its server's URL and an empty name: that finding is in the server fields.
      await page.locator('#document').fill(JSON.stringify(toolspec(), null, 2));
      await page.locator('#mcp-url').fill('https://mcp.example.org/pieces/mcp');
      await page.getByRole('button', { name: 'Validate', exact: true }).click();
      await page.locator('.problems li', { hasText: 'In the server fields above.' }).waitFor();
      const toolspecPieces = await problemPieces(page);
      assert.ok(toolspecPieces.some((p) => p.where === 'In the server fields above.'), JSON.stringify(toolspecPieces));

      // A document over the size limit: what is wrong is the document, not the message part the
      // page sent it in (the registry's path for it is /parts/1/raw).
      await page.locator('#document').fill(JSON.stringify({ ...v1Card('Large Page Agent', 'https://large.example.org/a2a'), description: 'd'.repeat(12_000) }, null, 2));
      await page.getByRole('button', { name: 'Validate', exact: true }).click();
      await page.getByText('10,240 bytes', { exact: false }).first().waitFor();
      const shown = await page.locator('main').innerText();
      assert.doesNotMatch(shown, /\/parts\//, shown.slice(0, 500));
      // Said of what the person gave (pasted text, or a file by its own name), not of the file
      // part the page sent under a name of its choosing; with the limit and what to do.
      const refusal = page.locator('.validation-result .notice.error');
      assert.match((await refusal.innerText()) ?? '', /The pasted document is 1\d,\d{3} bytes; this registry takes documents of at most 10,240 bytes\. Shorten/);
      assert.doesNotMatch(await refusal.innerText(), /agent-card\.json|uploaded/);
      const dropped = await page.evaluateHandle((text) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], 'my large card.json', { type: 'application/json' }));
        return transfer;
      }, JSON.stringify({ ...v1Card('Large File Agent', 'https://large.example.org/a2a'), description: 'd'.repeat(12_000) }));
      await page.locator('.drop-zone').dispatchEvent('drop', { dataTransfer: dropped });
      await refusal.filter({ hasText: /The file “my large card.json” is 1\d,\d{3} bytes; this registry takes documents of at most 10,240 bytes/ }).waitFor();
      // After a reload the text is kept, and so is the name of the file it came from.
      await page.reload();
      await page.getByRole('button', { name: 'Validate', exact: true }).click();
      await refusal.filter({ hasText: /The file “my large card.json” is 1\d,\d{3} bytes/ }).waitFor({ timeout: 5000 });
      // Indented past the limit, within it once minified: said so, as the registry says it of a data part.
      const spacious = JSON.stringify({ ...v1Card('Spacious Agent', 'https://spacious.example.org/a2a'), skills: Array.from({ length: 40 }, (_, i) => ({ id: `s${i}`, name: 'Skill', description: 'A skill.', tags: ['a', 'b'] })) }, null, 8);
      await page.locator('#document').fill(spacious);
      await page.getByRole('button', { name: 'Validate', exact: true }).click();
      await refusal.filter({ hasText: /The pasted document is [\d,]+ bytes;.* Without its whitespace it is [\d,]+ bytes: remove the indentation/ }).waitFor();
      await screenshot(page, 'validate-too-large');
      // Large enough that the request carrying it is over the registry's body limit (64 KiB, a
      // 413): the same words about the document, not the request body's encoded size.
      await page.locator('#document').fill(JSON.stringify({ ...v1Card('Huge Page Agent', 'https://huge.example.org/a2a'), description: 'd'.repeat(70_000) }));
      await page.getByRole('button', { name: 'Validate', exact: true }).click();
      await refusal.filter({ hasText: /TOO_LARGE\s*The pasted document is 70,\d{3} bytes; this registry takes documents of at most 10,240 bytes\. Shorten/ }).waitFor();
      assert.doesNotMatch(await page.locator('.validation-result').innerText(), /request body|HTTP_413/);
      page.problems.length = 0; // the browser logs the refused request (413) itself

      for (const p of [...card, ...toolspecPieces]) {
        // The text of the item is its pieces with a space between each: "…10,240 bytes Show in the document".
        const expected = [p.severity, p.path, p.message, p.note, p.hint, p.where].filter(Boolean).join(' ');
        assert.equal(p.text, expected);
        // On screen, what comes after the message starts on a line of its own.
        for (const below of [p.hintTop, p.whereTop]) if (below !== null) assert.ok(below >= p.messageBottom, `${p.path}: a piece runs into the message`);
      }
      await screenshot(page, 'validate-pieces');
    });
  });

  test('validate: the document typed survives leaving the page (a link, Back) and a reload', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/validate`);
      const text = JSON.stringify(toolspec(), null, 2);
      await page.locator('#document').fill(text);
      await page.locator('#mcp-name').fill('draft-files');
      await page.locator('#mcp-url').fill('https://mcp.example.org/draft/mcp');
      // The example is offered into an empty box only: one click would replace what was typed, for good.
      const example = page.getByRole('button', { name: 'start from an example card' });
      assert.equal(await example.count(), 0);
      await page.getByRole('button', { name: 'Validate', exact: true }).click();
      await page.locator('.validation-result .notice').waitFor();

      // Off to the search through the header, then Back: the page is drawn anew, the document is still there.
      await page.locator('.site-nav a', { hasText: 'Search' }).click();
      await page.locator('.hit').first().waitFor();
      await page.goBack();
      await page.locator('#document').waitFor();
      assert.equal(await page.locator('#document').inputValue(), text);
      assert.equal(await page.locator('#mcp-name').inputValue(), 'draft-files');
      assert.equal(await page.locator('#mcp-url').inputValue(), 'https://mcp.example.org/draft/mcp');
      await page.reload();
      await page.locator('#document').waitFor();
      assert.equal(await page.locator('#document').inputValue(), text);
      assert.equal(await page.locator('#mcp-name').inputValue(), 'draft-files');
      await screenshot(page, 'validate-draft-kept');

      // Emptied by the person, it stays empty.
      await page.locator('#document').fill('');
      await page.reload();
      await page.locator('#document').waitFor();
      assert.equal(await page.locator('#document').inputValue(), '');
      await example.click();
      assert.match(await page.locator('#document').inputValue(), /"Invoice Agent"/);
      // The offer goes with the empty box: the focus is on the example, to edit it, not on the page's top.
      await page.waitForFunction(() => document.activeElement?.id === 'document', undefined, { timeout: 5000 });
    });
  });

  test('register: a refusal of the registration is told as such, beside the token; a failed check keeps its place', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/validate`);
      // The invoice agent's URL is alice's: bob may not register a card at it.
      await page.locator('#document').fill(JSON.stringify(v1Card('Taken Url Agent', 'https://invoices.example.org/a2a'), null, 2));
      const register = page.locator('section.register');
      const refusal = register.locator('[role=alert]');
      for (const [token, code] of [
        ['not-a-real-token-0123456789', 'UNAUTHENTICATED'],
        [TOKENS.bob, 'FORBIDDEN'],
      ] as const) {
        await page.locator('#token').fill(token);
        await page.getByRole('button', { name: 'Register' }).click();
        await refusal.filter({ hasText: code }).waitFor();
        page.problems.length = 0; // the browser logs the refused request itself
        assert.match((await refusal.locator('strong').textContent()) ?? '', /^The registry did not register the document$/);
        assert.equal(await page.locator('.validation-result [role=alert]').count(), 0, 'nothing above, away from the token');
        // Beside the token field: just below the Register button, described by the field, focused.
        const [field, notice] = await Promise.all([page.locator('#token').boundingBox(), refusal.boundingBox()]);
        assert.ok(notice!.y > field!.y && notice!.y - (field!.y + field!.height) < 120, `the refusal is ${notice!.y - field!.y} px below the token field`);
        assert.equal(await page.locator('#token').getAttribute('aria-describedby'), await refusal.getAttribute('id'));
        assert.equal(await page.locator('#token').getAttribute('aria-invalid'), code === 'UNAUTHENTICATED' ? 'true' : null);
        if (code === 'UNAUTHENTICATED') {
          // Said to the person who typed the token, not to a program (which header) or an operator (REGISTRY_TOKENS).
          assert.match(await refusal.innerText(), /does not accept the token typed under Register: it may be mistyped/);
          assert.doesNotMatch(await refusal.innerText(), /Authorization|REGISTRY_TOKENS/);
        }
        assert.ok(await page.evaluate(() => document.activeElement?.closest('section.register') != null), 'focus moves to the refusal');
        await screenshot(page, `register-refused-${code.toLowerCase()}`);
      }
      await assertAccessible(page, 'the validate page with a refused registration');
      await assertNoNestedLiveRegions(page, 'the validate page with a refused registration');

      // A check the registry could not make (here: the token sent with it is refused) stays above, as before.
      await page.locator('#token').fill('not-a-real-token-0123456789');
      await page.getByRole('button', { name: 'Validate', exact: true }).click();
      const failed = page.locator('.validation-result [role=alert]');
      await failed.filter({ hasText: 'UNAUTHENTICATED' }).waitFor();
      page.problems.length = 0;
      assert.match((await failed.locator('strong').textContent()) ?? '', /^The registry could not check the document$/);
      // This registry checks documents without a token: the token typed is what it refused.
      const why = await page.locator('.validation-result p', { hasText: 'go to the token field' }).innerText();
      assert.match(why, /The token typed under Register is not one this registry knows; it checks documents without a token too\. Correct the token or clear it/);
      assert.doesNotMatch(why, /only for a token/);
      assert.equal(await register.locator('[role=alert]').count(), 0);
      await assertNoNestedLiveRegions(page, 'the validate page with a check refused');
    });
  });

  test('a registry closed to anonymous reads: validating without a token says where to type one, and that token checks the document', async () => {
    const closed = await startTestRegistry({ REGISTRY_PUBLIC_READ: 'false' });
    try {
      await withPage(async (page) => {
        // First visited, the search asks for a token: its way in, said plainly above the field,
        // not as an alert that the search failed (nothing was asked).
        await page.goto(`${closed.url}/`);
        await page.locator('.notice', { hasText: 'This registry needs a registry token to read: type yours below.' }).waitFor();
        assert.equal(await page.locator('#read-token').isVisible(), true);
        assert.equal(await page.locator('[role=alert]').count(), 0, 'no alert on arrival');
        assert.doesNotMatch(await page.locator('main').innerText(), /The search failed|UNAUTHENTICATED/);
        await screenshot(page, 'search-closed-registry');
        await page.goto(`${closed.url}/validate`);
        await page.locator('#document').fill(JSON.stringify(v1Card('Closed Door Agent', 'https://closed.example.org/a2a'), null, 2));
        await page.getByRole('button', { name: 'Validate', exact: true }).click();
        const wanted = page.locator('.validation-result [role=alert]', { hasText: 'UNAUTHENTICATED' });
        await wanted.waitFor();
        page.problems.length = 0; // the browser logs the refused request (401) itself
        // Said to the person (no token typed, and where to type it), not in the registry's words for a program.
        assert.match(await wanted.innerText(), /This registry checks documents only for a registry token it knows, and none was typed\.\s+Type yours under Register \(go to the token field\), then validate again\./);
        assert.doesNotMatch(await wanted.innerText(), /Authorization|REGISTRY_TOKENS|REGISTRY_PUBLIC_READ/);
        await screenshot(page, 'validate-closed-registry');
        await assertAccessible(page, 'the validate page refused for want of a token');
        await page.getByRole('button', { name: 'go to the token field' }).click();
        assert.equal(await page.evaluate(() => document.activeElement?.id), 'token');
        await page.keyboard.type(TOKENS.alice);
        await page.getByRole('button', { name: 'Validate', exact: true }).click();
        await page.locator('.validation-result .notice.ok', { hasText: 'Valid.' }).waitFor();
        // The token the registry took is kept for the tab, as a registration's is: Search and the
        // entries read with it instead of asking for it again.
        assert.equal(await page.evaluate(() => sessionStorage.getItem('a2a-registry.token')), TOKENS.alice);

        // Registered, its entry reads with that token, and so does its raw JSON: a plain link
        // would be refused (the browser sends no token with it), the page downloads it with the token.
        await page.getByRole('button', { name: 'Register' }).click();
        await page.getByRole('link', { name: 'Open the entry' }).click();
        await page.locator('h1', { hasText: 'Closed Door Agent' }).waitFor();
        const raw = page.locator('.documents a');
        const rawUrl = new URL((await raw.getAttribute('href'))!, closed.url);
        assert.match(rawUrl.pathname, /^\/agents\/[^/]+\/card\.json$/);
        assert.equal((await fetch(rawUrl)).status, 401, 'the URL itself needs a token');
        const [download] = await Promise.all([page.waitForEvent('download'), raw.click()]);
        assert.equal(download.suggestedFilename(), 'card.json');
        const saved = JSON.parse(fs.readFileSync((await download.path())!, 'utf8')) as WireJson;
        assert.equal(saved.name, 'Closed Door Agent');
        assert.equal(await page.locator('[role=alert]').count(), 0);
        await screenshot(page, 'entry-closed-registry');

        // Opened in a new tab, it shows the JSON. That tab has no token (Chromium does not copy
        // session storage into a tab opened with a middle click) and the plain URL answers 401:
        // the link points at the document the page read with the token. Clicked at once (still
        // being read), then again once its href is that copy.
        for (const open of [() => raw.click({ button: 'middle' }), () => raw.click({ modifiers: ['Control'] })]) {
          const [tab] = await Promise.all([page.context().waitForEvent('page', { timeout: 5000 }), open()]);
          await tab.waitForLoadState();
          assert.equal((JSON.parse((await tab.locator('pre').first().textContent()) ?? '') as WireJson).name, 'Closed Door Agent');
          await tab.close();
          await page.waitForFunction(() => document.querySelector('.documents a')?.getAttribute('href')?.startsWith('blob:'));
        }
        assert.equal(await page.locator('[role=alert]').count(), 0);

        // A token that stops working meanwhile: the refusal is said beside the link, with the token prompt.
        await page.evaluate(() => sessionStorage.setItem('a2a-registry.token', 'revoked-token-0123456789abcdef'));
        await raw.click();
        await page.locator('[role=alert]', { hasText: 'UNAUTHENTICATED' }).waitFor();
        page.problems.length = 0; // the browser logs the refused request (401) itself
        assert.match((await page.locator('[role=alert]').textContent()) ?? '', /could not be downloaded/);
        // This registry reads only with a token: no offer to read without one.
        assert.match(await page.locator('[role=alert]').innerText(), /does not accept the token kept in this tab/);
        assert.equal(await page.getByRole('button', { name: 'Read without a token' }).count(), 0);
        await screenshot(page, 'entry-closed-download-refused');
        await page.locator('#read-token').fill(TOKENS.alice);
        await page.getByRole('button', { name: 'Use this token' }).click();
        await page.locator('[role=alert]').waitFor({ state: 'detached' });
        // The prompt is gone, and the focus in it: it waits on the document's link, to download again.
        await page.waitForFunction(() => document.activeElement?.closest('.documents') != null, undefined, { timeout: 5000 });
        const [again] = await Promise.all([page.waitForEvent('download'), raw.click()]);
        assert.equal(JSON.parse(fs.readFileSync((await again.path())!, 'utf8')).name, 'Closed Door Agent');

        // The download refused by the registry's read budget (the catalog door's HTTP 429, as the
        // registry words it): held like any other read refused, and the next download (or search)
        // asked once the wait is over, not at once to be refused again.
        const refuseOnce = async (route: Route) => {
          await route.fulfill({
            status: 429,
            headers: { 'retry-after': '2', 'content-type': 'application/json' },
            body: JSON.stringify({ errorCode: 'RESOURCE_EXHAUSTED', registryCode: 'RATE_LIMITED', message: 'Too many reads (search, get, list, validate) from this address: the limit is 2 per minute. Retry after 2 s.' }),
          });
        };
        await page.route(rawUrl.href, refuseOnce, { times: 1 });
        const asked: number[] = [];
        page.on('request', (r) => void (r.url() === rawUrl.href && asked.push(Date.now())));
        await raw.click();
        await page.locator('[role=alert]', { hasText: 'RATE_LIMITED' }).waitFor();
        page.problems.length = 0; // the browser logs the refused request (429) itself
        const refusedAt = asked[asked.length - 1]!;
        const held = await page.evaluate(() => JSON.parse(sessionStorage.getItem('a2a-registry.rate-wait') ?? '{}') as { read?: number });
        assert.ok((held.read ?? 0) > Date.now(), 'the refusal holds the page\'s reads');
        const [waited] = await Promise.all([page.waitForEvent('download'), raw.click()]);
        assert.equal(JSON.parse(fs.readFileSync((await waited.path())!, 'utf8')).name, 'Closed Door Agent');
        const after = asked.filter((at) => at > refusedAt).map((at) => at - refusedAt);
        assert.ok(after.length >= 1 && after[0]! >= 1900, `asked again ${after[0]} ms after the refusal`);

        // Refused by the address's request limit instead (the catalog door's flood guard, in its
        // words): that limit counts every request, so the refusal holds the page's writes as well
        // as its reads, and is said as the page says it for a search or a check refused so.
        await page.route(
          rawUrl.href,
          (route) =>
            route.fulfill({
              status: 429,
              headers: { 'retry-after': '2', 'content-type': 'application/json' },
              body: JSON.stringify({ errorCode: 'RATE_LIMIT_EXCEEDED', registryCode: 'RATE_LIMITED', retryAfterSeconds: 2, message: 'Too many requests from this address: the limit is 150 per minute. Retry after 2 s.' }),
            }),
          { times: 1 },
        );
        await raw.click();
        await page.locator('[role=alert]', { hasText: 'searches, entries, downloads, checks and registrations count together' }).waitFor({ timeout: 5000 });
        page.problems.length = 0; // the browser logs the refused request (429) itself
        const heldWhole = await page.evaluate(() => JSON.parse(sessionStorage.getItem('a2a-registry.rate-wait') ?? '{}') as { write?: number });
        assert.ok((heldWhole.write ?? 0) > Date.now(), "the address's limit holds the page's writes too");
      });
    } finally {
      await closed.close();
    }
  });

  test('rate limited: the notice says how long to wait once', async () => {
    const limited = await startTestRegistry({ REGISTRY_RATE_READS_PER_MINUTE: '2', REGISTRY_RATE_REQUESTS_PER_MINUTE: '150' });
    try {
      await withPage(async (page) => {
        const notice = page.locator('[role=alert]', { hasText: 'RATE_LIMITED' });
        // Each search answered (or refused) before the next page loads: a page loaded during the
        // wait would wait for it, not be refused.
        for (const q of ['alpha', 'beta', 'gamma', 'delta']) {
          await page.goto(`${limited.url}/?q=${q}`);
          await page.locator('#result-count', { hasText: 'No results.' }).or(notice).waitFor();
          if (await notice.count()) break;
        }
        await notice.waitFor();
        page.problems.length = 0; // the browser logs the refused request (429) itself
        const text = await notice.innerText();
        assert.equal(text.match(/(retry after|try again in) \d+ s/gi)?.length, 1, text);
        // Asking again before then would only be refused again: the button waits as long.
        assert.equal(await notice.getByRole('button', { name: 'Try again' }).isDisabled(), true);
        // The wait counts down on screen; a screen reader is told it once (in the notice, and
        // politely the wait's end), not each second: the counting number is hidden from it.
        const wait = notice.getByRole('status');
        const told = await wait.ariaSnapshot();
        assert.match(told, /Try again in \d+ s \./, told);
        const shown = Number(/in (\d+) s/.exec(await wait.innerText())?.[1]);
        await page.waitForFunction((n) => Number(/in (\d+) s/.exec(document.querySelector('[role=alert] [role=status]')?.textContent ?? '')?.[1]) < n, shown, { timeout: 3000 });
        assert.equal(await wait.ariaSnapshot(), told);

        // Validating too (a read), on a page loaded anew (the wait is kept in the tab's session
        // storage; a new page forgot it, and asked at once, to be refused again): Validate waits
        // for it, says so, and asks nothing meanwhile.
        let asked = 0;
        page.on('request', (r) => void (r.url().endsWith('/message:send') && asked++));
        await page.goto(`${limited.url}/validate`);
        await page.locator('#document').fill(JSON.stringify(v1Card('Patient Agent', 'https://patient.example.org/a2a')));
        await page.getByRole('button', { name: 'Validate', exact: true }).click();
        await page.locator('.validation-summary', { hasText: /^Validating in \d+ s\s*\d+ s\s*, when the registry allows it\.$/ }).waitFor({ timeout: 5000 });
        assert.equal(await page.getByRole('button', { name: 'Validating…' }).isDisabled(), true);
        assert.equal(asked, 0, 'asked the registry during the wait');

        // The wait is the page's, not one view's: the search (the header's link), an entry opened
        // meanwhile and Back to the search wait for it too, say so, and ask nothing (each asked
        // at once, and was refused again).
        await page.locator('[data-nav=search]').click();
        const searchWaits = page.locator('#result-count', { hasText: /^Searching in \d+ s\s*\d+ s\s*, when the registry allows it\.$/ });
        await searchWaits.waitFor({ timeout: 5000 });
        await page.evaluate(() => {
          const link = Object.assign(document.createElement('a'), { href: '/entries/waiting-entry' });
          document.body.append(link);
          link.click();
          link.remove();
        });
        await page.locator('.entry-page [role=status]', { hasText: /^Loading in \d+ s\s*\d+ s\s*, when the registry allows it\.$/ }).waitFor({ timeout: 5000 });
        await page.goBack();
        await searchWaits.waitFor({ timeout: 5000 });
        assert.equal(asked, 0, 'asked the registry during the wait, on another view');
        // And the search reloaded waits as well.
        await page.reload();
        await searchWaits.waitFor({ timeout: 5000 });
        assert.equal(asked, 0, 'asked the registry during the wait, after a reload');

        // The page itself refused by the address's budget of requests (every request counts,
        // the page's files too): a page saying what was limited and when to reload, not the
        // flood guard's JSON shown as text.
        for (let i = 0; i <= 150; i++) {
          const res = await request(`${limited.url}/validate`, { headers: { accept: BROWSER_ACCEPT } });
          await res.body.dump();
          if (res.statusCode === 429) break;
        }
        // A view's code (loaded when first shown) refused by that limit too: said so, and when to
        // reload, not blamed on the connection or an update.
        // (Its file not in the browser's cache, where an earlier visit in this test put it.)
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('Network.enable');
        await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
        await page.locator('[data-nav=validate]').click();
        const codeRefused = page.locator('[role=alert]', { hasText: 'too many requests from this address' });
        await codeRefused.waitFor({ timeout: 5000 });
        assert.equal(await page.locator('h1').innerText(), 'This page could not be loaded');
        assert.match(await codeRefused.innerText(), /Its code was refused: too many requests from this address\..*Reload the page in \d+ s\s*\d+ s\s*\./s);
        assert.doesNotMatch(await codeRefused.innerText(), /connection|updated/);
        // Failed as Safari tells it (no file named, no cause: "Importing a module script failed."),
        // the page asks for its own script instead, refused as well: the same notice.
        await page.route(`${limited.url}/assets/chunk-*.js`, (route) =>
          route.fulfill({ contentType: 'text/javascript', body: "throw new TypeError('Importing a module script failed.');" }),
        );
        await page.locator('[data-nav=search]').click();
        await page.locator('.hit a, #result-count').first().waitFor();
        await page.evaluate(() => {
          const link = Object.assign(document.createElement('a'), { href: '/entries/waiting-entry' });
          document.body.append(link);
          link.click();
          link.remove();
        });
        await codeRefused.waitFor({ timeout: 5000 });
        assert.match(await codeRefused.innerText(), /Its code was refused: too many requests from this address\..*Reload the page in \d+ s/s);
        page.problems.length = 0; // the browser logs the refused files (429) itself
        const refused = await page.goto(`${limited.url}/validate`);
        assert.equal(refused?.status(), 429);
        assert.match(refused?.headers()['content-type'] ?? '', /^text\/html/);
        assert.match(refused?.headers()['retry-after'] ?? '', /^\d+$/);
        assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Too many requests');
        assert.match(await page.locator('body').innerText(), /takes at most 150 requests a minute from one address, and this address has sent more: pages and their files, searches, entries, checks and registrations count together\.\s+Reload this page in \d+ s\./);
        page.problems.length = 0; // the browser logs the refused page (429) itself
        await assertAccessible(page, 'the page refused by the request limit');
        await screenshot(page, 'page-rate-limited');
      });
    } finally {
      await limited.close();
    }
  });

  test('a token the registry refuses: the page asks for one and reads with it', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/validate`);
      await page.evaluate(() => sessionStorage.setItem('a2a-registry.token', 'expired-token-0123456789abcdef'));
      await page.goto(`${registry.url}/?q=weather`);
      const refusal = page.locator('[role=alert]', { hasText: 'UNAUTHENTICATED' });
      await refusal.waitFor();
      // Said to the person who typed the token, not to a program (which header) or an operator
      // (REGISTRY_TOKENS); and this registry reads without one, which the prompt offers.
      assert.match(await refusal.innerText(), /does not accept the token kept in this tab.*or read without a token/s);
      assert.doesNotMatch(await refusal.innerText(), /Authorization|REGISTRY_TOKENS/);
      assert.match(await page.locator('#read-token-help').innerText(), /reads without a token too/);
      // Another token refused: the prompt is drawn again, with the focus in its field to type a third.
      await page.locator('#read-token').fill('mistyped-token-0123456789abcdef');
      await page.getByRole('button', { name: 'Use this token' }).click();
      await page.waitForFunction(() => document.activeElement?.id === 'read-token', undefined, { timeout: 5000 });
      await refusal.waitFor();
      // Said as the token just typed, not as one kept from before ("kept in this tab … Type yours below").
      assert.match(await refusal.innerText(), /does not accept the token just typed: it may be mistyped, or no longer valid\. Type it again below, or read without a token\./);
      assert.doesNotMatch(await refusal.innerText(), /kept in this tab/);
      page.problems.length = 0; // the browser logs the refused request (401) itself
      await page.locator('#read-token').fill(TOKENS.bob);
      await page.getByRole('button', { name: 'Use this token' }).click();
      await page.locator('.hit', { hasText: 'Weather Agent' }).waitFor();
      assert.equal(await page.evaluate(() => sessionStorage.getItem('a2a-registry.token')), TOKENS.bob);
      // The prompt, and the focus in it, are gone: the focus is on what was found, and Tab goes on to the results.
      await page.waitForFunction(() => document.activeElement?.id === 'result-count', undefined, { timeout: 5000 });
      await page.keyboard.press('Tab');
      assert.ok(await page.evaluate(() => document.activeElement?.closest('.hit') != null), 'Tab leads to the first result');
      await screenshot(page, 'token-prompt-resolved');

      // Or without a token, as anyone reads this registry: the refused one is forgotten.
      await page.evaluate(() => sessionStorage.setItem('a2a-registry.token', 'expired-token-0123456789abcdef'));
      await page.goto(`${registry.url}/?q=weather`);
      await refusal.waitFor();
      page.problems.length = 0;
      await page.getByRole('button', { name: 'Read without a token' }).click();
      await page.locator('.hit', { hasText: 'Weather Agent' }).waitFor();
      assert.equal(await page.evaluate(() => sessionStorage.getItem('a2a-registry.token')), null);

      // An entry read with a token typed in its prompt: the focus goes to its heading.
      await page.evaluate(() => sessionStorage.setItem('a2a-registry.token', 'expired-token-0123456789abcdef'));
      await page.goto(`${registry.url}/entries/${ids.weather}`);
      await page.locator('#read-token').fill(TOKENS.bob);
      await page.getByRole('button', { name: 'Use this token' }).click();
      await page.locator('h1', { hasText: 'Weather Agent' }).waitFor();
      await page.waitForFunction(() => document.activeElement?.tagName === 'H1', undefined, { timeout: 5000 });
      page.problems.length = 0;

      // Revisions compared with a token refused meanwhile: the comparison asks for one too, and compares with it.
      await page.goto(`${registry.url}/entries/${ids.invoice}`);
      await page.locator('h1', { hasText: 'Invoice Agent' }).waitFor();
      await page.evaluate(() => sessionStorage.setItem('a2a-registry.token', 'expired-token-0123456789abcdef'));
      await page.getByRole('button', { name: 'Compare' }).click();
      await page.locator('.diff [role=alert]', { hasText: 'UNAUTHENTICATED' }).waitFor();
      page.problems.length = 0; // the browser logs the refused request (401) itself
      await page.locator('#compare-token').fill(TOKENS.bob, { timeout: 5000 });
      await page.locator('.diff').getByRole('button', { name: 'Use this token' }).click();
      await page.locator('.diff-summary').waitFor();
      await page.waitForFunction(() => document.activeElement?.tagName === 'H3', undefined, { timeout: 5000 });
      assert.equal(await page.evaluate(() => sessionStorage.getItem('a2a-registry.token')), TOKENS.bob);
    });
  });

  test('the registry could not be reached: Search asks again once it is back, without a new history entry', async () => {
    // A registry of its own, stopped and started again on the same port and data.
    const port = String(await freePort());
    const dataDir = tempDir('a2a-registry-web-retry-');
    let comeback = await startTestRegistry({ PORT: port, REGISTRY_DATA_DIR: dataDir });
    try {
      await withPage(async (page) => {
        // Empty still: a link whose words are blank (q=%20) says nothing is registered, as the
        // page without words does, not "Nothing matches" (there is nothing to match).
        await page.goto(`${comeback.url}/?q=%20`);
        await page.locator('.notice', { hasText: 'Nothing is registered yet.' }).waitFor();
        assert.equal(await page.locator('#result-count').innerText(), 'No entries.');

        const alice = await sdkClient(comeback.url, { token: TOKENS.alice });
        await op(alice, { register: { agentCard: v1Card('Comeback Agent', 'https://comeback.example.org/a2a') } });
        await page.goto(`${comeback.url}/?q=comeback`);
        await expectHits(page, ['Comeback Agent']);
        const entries = await page.evaluate(() => history.length);
        await comeback.close();
        const search = page.getByRole('button', { name: 'Search', exact: true });
        await search.click();
        await page.locator('[role=alert]', { hasText: 'NETWORK' }).waitFor();
        page.problems.length = 0; // the browser logs the failed request itself

        comeback = await startTestRegistry({ PORT: port, REGISTRY_DATA_DIR: dataDir });
        await search.click();
        await page.locator('.hit', { hasText: 'Comeback Agent' }).waitFor();
        assert.equal(await page.locator('[role=alert]').count(), 0, 'the failure is gone');
        assert.equal(await page.evaluate(() => history.length), entries, 'searching the same words again adds no history entry');
        await screenshot(page, 'search-again');

        // Gone again when a result is followed: the entry page's code (loaded when first shown)
        // cannot arrive. Said so, with a reload that works once the registry is back, not
        // "Loading…" for ever.
        await comeback.close();
        await page.locator('.hit a', { hasText: 'Comeback Agent' }).click();
        await page.locator('[role=alert]', { hasText: 'reload the page' }).waitFor();
        page.problems.length = 0; // the browser logs the failed request itself
        assert.equal(await page.locator('h1').innerText(), 'This page could not be loaded');
        await screenshot(page, 'entry-code-not-loaded');
        comeback = await startTestRegistry({ PORT: port, REGISTRY_DATA_DIR: dataDir });
        await page.getByRole('button', { name: 'Reload the page' }).click();
        await page.locator('h1', { hasText: 'Comeback Agent' }).waitFor();

        // A view's code that fails as Safari tells it: "Importing a module script failed.", no
        // file named, no cause. The registry answers, so the way out is said: reload, and if it
        // fails still, the registry's files are amiss (its operator's to mend), not the connection.
        await page.route(`${comeback.url}/assets/chunk-*.js`, (route) =>
          route.fulfill({ contentType: 'text/javascript', body: "throw new TypeError('Importing a module script failed.');" }),
        );
        await page.locator('[data-nav=validate]').click();
        const unnamed = page.locator('[role=alert]', { hasText: 'does not say which file failed' });
        await unnamed.waitFor({ timeout: 5000 });
        page.problems.length = 0; // the module's throw is logged as an uncaught error
        assert.match(await unnamed.innerText(), /^Its code did not load, .* Reload the page; if it still fails, tell the registry's operator: .*web bundle, made by npm run build/);
        assert.doesNotMatch(await unnamed.innerText(), /connection/);
      });
    } finally {
      await comeback.close().catch(() => undefined);
      removeTempDir(dataDir);
    }
  });

  test('a proxy in front of the registry answers its own HTML page: said so, not as a JSON parse error', async () => {
    // A real reverse proxy on 127.0.0.1 that passes the page through and answers the A2A calls
    // with its sign-in page (200 text/html), as one does whose session cookie the page never sends;
    // then with its own error page (502 text/html), as one does that cannot reach the registry.
    let status = 200;
    // When each A2A call reached the proxy (status 0: passed through to the registry).
    const calls: number[] = [];
    const proxy = await startProxy((res) => {
      calls.push(Date.now());
      if (status === 0) return false;
      if (status === 503) {
        // The registry's own answer while its search index loads (RegistryService.requireIndex, over HTTP+JSON).
        const message =
          'The registry is starting up: loading the search index (1200 of 20000 entries). Searches are answered once it is loaded; retry in 2 seconds (GET /readyz says when it is ready).';
        const info = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'STARTING_UP', domain: 'a2a-registry', metadata: { retryAfterSeconds: '2' } };
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' }).end(JSON.stringify({ error: { code: 503, status: 'UNAVAILABLE', message, details: [info] } }));
        return true;
      }
      if (status === 429) {
        // A rate limit in front of the registry, as the registry's own: google.rpc.Status and Retry-After.
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' }).end(JSON.stringify({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Too many requests.' } }));
        return true;
      }
      const body = status === 200 ? '<!doctype html><title>Sign in</title><form>Sign in to continue</form>' : '<html><body><h1>502 Bad Gateway</h1></body></html>';
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);
      return true;
    });
    try {
      await withPage(async (page) => {
        await page.goto(`${proxy.url}/?q=weather`);
        const notice = page.locator('[role=alert]', { hasText: 'FAILED' });
        await notice.waitFor();
        const text = await notice.innerText();
        assert.match(text, /answered HTTP 200 with text\/html, not the registry's JSON: something in front of the registry \(a proxy, a sign-in page\) answered instead/);
        assert.doesNotMatch(text, /Unexpected token|not valid JSON/);
        await screenshot(page, 'search-proxy-html');

        // The registry starting up (its search index loading): its reason, in words for a person
        // with the wait counted down, not "HTTP_503" and the advice to programs (GET /readyz);
        // Search pressed meanwhile asks once the wait is over, and says so.
        status = 503;
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        const starting = page.locator('[role=alert]', { hasText: 'STARTING_UP' });
        await starting.waitFor();
        page.problems.length = 0; // the browser logs the refused request (503) itself
        const startingSaid = await starting.innerText();
        assert.match(
          startingSaid,
          /The registry is starting up: loading the search index \(1200 of 20000 entries\)\. Nothing registered is lost; it answers once it is ready\.\s+Try again in [12] s\s*[12] s\s*\./,
        );
        assert.doesNotMatch(startingSaid, /readyz|HTTP_503|retry in 2 seconds/);
        status = 0;
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        assert.match(await page.locator('#result-count').innerText(), /^Searching again in [12] s\s*[12] s\s*, when the registry allows it\.$/);
        await page.locator('.hit').first().waitFor({ timeout: 5000 });
        status = 200;

        // A gateway's error page: its status, what it means and what to do, not a bare "HTTP 502".
        status = 502;
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        const gateway = page.locator('[role=alert]', { hasText: 'HTTP_502' });
        await gateway.waitFor();
        page.problems.length = 0; // the browser logs the failed request (502) itself
        assert.match(
          await gateway.innerText(),
          /answered HTTP 502 \(Bad Gateway\) with text\/html, not the registry's answer: something in front of the registry \(a proxy, a gateway\) could not get an answer from it\..*Try again in a moment; if it stays, tell the registry's operator\./s,
        );
        assert.equal(await gateway.getByRole('button', { name: 'Try again' }).count(), 1);

        // Rate limited, and Search pressed again at once: asked once the 2 s the limit names are
        // over (asked sooner, it is only refused again), and the page says so meanwhile.
        status = 429;
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        await page.locator('[role=alert]', { hasText: 'RATE_LIMITED' }).waitFor();
        page.problems.length = 0; // the browser logs the refused request (429) itself
        const refusedAt = calls[calls.length - 1]!;
        status = 0;
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        assert.match(await page.locator('#result-count').innerText(), /^Searching again in [12] s\s*[12] s\s*, when the registry allows it\.$/);
        // Other words typed meanwhile wait as long (the limit is on the address, not the words):
        // one search, theirs, once the wait is over.
        await page.locator('#q').fill('ledger');
        await page.locator('#result-count', { hasText: /^Searching in [12] s\s*[12] s\s*, when the registry allows it\.$/ }).waitFor({ timeout: 5000 });
        await expectHits(page, ['Ledger Agent']);
        const askedAfter = calls.filter((at) => at > refusedAt).map((at) => at - refusedAt);
        assert.equal(askedAfter.length, 1, `asked ${askedAfter.length} times after the refusal`);
        assert.ok(askedAfter[0]! >= 1900, `asked again ${askedAfter[0]} ms after the refusal`);

        // Refused again and left alone: the notice counts the wait down, then says politely that
        // it is over, "Try again" enabled.
        status = 429;
        await page.locator('#q').fill('weather');
        const refused = page.locator('[role=alert]', { hasText: 'RATE_LIMITED' });
        await refused.waitFor();
        page.problems.length = 0; // the browser logs the refused request (429) itself
        status = 0;
        await refused.getByRole('status').filter({ hasText: /^The wait is over: the registry takes requests again\.$/ }).waitFor({ timeout: 4000 });
        assert.equal(await refused.getByRole('button', { name: 'Try again' }).isEnabled(), true);

        // A request refused whole (HTTP 429, before the registry reads it) limits every request
        // from the address, not the kind of operation refused: said so, and a registration
        // asked next waits as well (it was asked at once, as if only reads were limited, and
        // refused again).
        status = 429;
        await page.locator('[data-nav=validate]').click();
        await page.locator('#document').fill(JSON.stringify(v1Card('Proxied Agent', 'https://proxied.example.org/a2a')));
        await page.getByRole('button', { name: 'Validate', exact: true }).click();
        const limited = page.locator('.validation-summary [role=alert]', { hasText: 'RATE_LIMITED' });
        await limited.waitFor();
        page.problems.length = 0; // the browser logs the refused request (429) itself
        assert.match(await limited.innerText(), /Too many requests from this address: searches, entries, downloads, checks and registrations count together \(and so does loading this page\), so each waits until the limit allows it again\.\s+Try again in [12] s/);
        const validatedAt = calls.length;
        await page.locator('#token').fill(TOKENS.alice);
        await page.getByRole('button', { name: 'Register', exact: true }).click();
        await page.locator('.register-result', { hasText: /^Registering in [12] s\s*[12] s\s*, when the registry allows it\.$/ }).waitFor({ timeout: 3000 });
        assert.equal(calls.length, validatedAt, 'registered during the wait');
      });
    } finally {
      await proxy.close();
    }
  });

  test('a proxy that never answers: after the deadline the page says so and asks again at a click (search, entry, another revision, a comparison)', async () => {
    // A real proxy on 127.0.0.1 that passes the page through and holds the A2A calls open,
    // never answering, until told to pass them on.
    let hold = true;
    const held: http.ServerResponse[] = [];
    let onHeld = () => {};
    const requestHeld = () => new Promise<void>((resolve) => (onHeld = resolve));
    const proxy = await startProxy((res) => {
      if (!hold) return false;
      held.push(res);
      onHeld();
      return true;
    });
    try {
      await withPage(async (page) => {
        // The page's own script held (a slow connection): meanwhile <main> says the page is
        // loading (it was blank), and once 15 s have passed, what to do if it never comes.
        let scriptComes = () => {};
        const scriptHeld = new Promise<void>((resolve) => (scriptComes = resolve));
        const mainScript = /\/assets\/main-[\w-]+\.js$/;
        await page.route(mainScript, async (route) => {
          await scriptHeld;
          await route.continue();
        });
        await page.goto(`${registry.url}/`, { waitUntil: 'commit' });
        const loading = page.locator('main .page-loading');
        await loading.waitFor({ timeout: 5000 });
        assert.equal(await loading.innerText(), 'Loading…');
        await page.evaluate(() => document.getAnimations().forEach((a) => a.finish())); // the 15 s pass
        assert.equal(await loading.innerText(), 'Loading… Still loading: check your connection, then reload the page.');
        await screenshot(page, 'page-script-held');
        scriptComes();
        await page.locator('.hit').first().waitFor();
        assert.equal(await loading.count(), 0, 'the page replaces the loading note');
        await page.unroute(mainScript);

        await passDeadlinesOnDemand(page);
        let arrived = requestHeld();
        await page.goto(`${proxy.url}/?q=weather`);
        await arrived;
        await passDeadlines(page);
        const notice = page.locator('[role=alert]', { hasText: 'TIMEOUT' });
        await notice.waitFor({ timeout: 5000 });
        assert.match(await notice.innerText(), /did not answer within 20 s.*Try again/s);
        assert.equal(await page.locator('#result-count').innerText(), '', 'no "Searching…" any more');
        await screenshot(page, 'search-no-answer');
        hold = false;
        await page.getByRole('button', { name: 'Try again' }).click();
        await expectHits(page, ['Weather Agent']);
        assert.equal(await page.locator('[role=alert]').count(), 0, 'the failure is gone');

        hold = true;
        arrived = requestHeld();
        await page.goto(`${proxy.url}/entries/${ids.invoice}`);
        await arrived;
        assert.equal(await page.locator('h1').innerText(), 'Loading entry…');
        await passDeadlines(page);
        await page.locator('[role=alert]', { hasText: 'TIMEOUT' }).waitFor({ timeout: 5000 });
        hold = false;
        await page.getByRole('button', { name: 'Try again' }).click();
        await page.locator('h1', { hasText: 'Invoice Agent' }).waitFor();

        // Another revision asked for while the registry is slow: the page says it is coming.
        hold = true;
        arrived = requestHeld();
        await page.locator('table.revisions a', { hasText: '2' }).click();
        await arrived;
        assert.equal(await page.locator('.entry-page > [role=status]').innerText({ timeout: 5000 }), 'Loading revision 2…');
        assert.equal(await page.locator('.entry-page').getAttribute('aria-busy'), 'true');
        await screenshot(page, 'entry-revision-coming');
        hold = false;
        await passDeadlines(page);
        // It did not come: the revision on screen stays, beside the failure, no longer "Loading".
        const notCome = page.locator('[role=alert]', { hasText: 'TIMEOUT' });
        await notCome.waitFor({ timeout: 5000 });
        assert.match(await notCome.innerText(), /Revision 2 could not be loaded; revision 3 is still shown/);
        assert.equal(await page.locator('h1').innerText(), 'Invoice Agent');
        assert.equal(await page.locator('.entry-page > [role=status]').innerText(), '');
        assert.equal(await page.locator('.entry-page').getAttribute('aria-busy'), 'false');
        await page.getByRole('button', { name: 'Try again' }).click();
        await page.locator('.entry-head', { hasText: 'not the current one' }).waitFor();
        assert.equal(await page.locator('.entry-page > [role=status]').innerText(), '');

        // A comparison that got no answer: asked again from its own notice, the focus kept on the comparison.
        hold = true;
        arrived = requestHeld();
        await page.selectOption('#diff-from', '1');
        await page.getByRole('button', { name: 'Compare' }).click();
        await arrived;
        await passDeadlines(page);
        await page.locator('.diff [role=alert]', { hasText: 'TIMEOUT' }).waitFor({ timeout: 5000 });
        hold = false;
        await page.locator('.diff').getByRole('button', { name: 'Try again' }).press('Enter');
        await page.locator('.diff-summary').waitFor();
        assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'H3', 'the focus is on the comparison');

        // A view's code held past the deadline (its file never answered): said as not arrived
        // (the connection, or an update), not as a failure the browser did not explain.
        await page.route(`${proxy.url}/assets/chunk-*.js`, () => undefined);
        await page.locator('[data-nav=validate]').click();
        await page.locator('main [role=status]', { hasText: 'Loading…' }).waitFor();
        await passDeadlines(page);
        const late = page.locator('[role=alert]', { hasText: 'Its code did not arrive' });
        await late.waitFor({ timeout: 5000 });
        assert.match(await late.innerText(), /the registry cannot be reached, or it was updated since this page was opened\. Check your connection, then reload the page\./);
      });
    } finally {
      for (const res of held) res.destroy();
      await proxy.close();
    }
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

      // Larger text chosen in the browser's settings (not zoom): all of the page's text follows
      // it, the descriptions and labels as the headings do.
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
      assert.deepEqual(await layout(page, `.hit:has(a[href$="${id}"]) :is(h2, .hit-description)`), [
        { direction: 'rtl', right: true },
        { direction: 'rtl', right: true },
      ]);
      assert.deepEqual(await layout(page, '.hit:has(a[href$="' + ids.ledger + '"]) .hit-description'), [{ direction: 'ltr', right: false }]);
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
        const description = page.locator(`.hit:has(a[href$="${id}"]) .hit-description`);
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
      const summary = page.locator(`.hit:has(a[href$="${agent}"]) .hit-description`);
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
      for (const width of [1200, 360, 320]) {
        await page.setViewportSize({ width, height: 900 });
        for (const [path, ready] of [
          ['/', `.hit a[href$="${agent}"]`],
          ['/?q=wraparound', `.hit a[href$="${server}"]`],
          [`/entries/${agent}`, '#skills-h'],
          [`/entries/${server}`, '#tools-h'],
        ] as const) {
          await page.goto(`${registry.url}${path}`);
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
        }
        // The last page, the MCP server: its ordinary table keeps short words whole (a column
        // title, a name, a type), however long the words in the table above it; at 320 px too,
        // where its three columns do not fit a card and each parameter is drawn as a block.
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
    });
  });
});

interface ProblemPieces {
  text: string;
  severity: string;
  path: string;
  message: string;
  note: string;
  hint: string;
  where: string;
  messageBottom: number;
  hintTop: number | null;
  whereTop: number | null;
}

/** Each finding of the validate page: its text as a whole, its pieces, and where the pieces after the message are drawn. */
function problemPieces(page: Page): Promise<ProblemPieces[]> {
  // (No named function in here: the test's compiler would wrap it in a helper the page lacks.)
  return page.locator('.problems li').evaluateAll((items) =>
    items.map((li) => {
      // Where to look: the link or note that ends the item (whatever element holds it).
      const pieces = ['.badge', '.path', '.message', '.note', '.hint', ':scope > :last-child:not(.badge, .path, .message, .note, .hint)'].map((selector) => li.querySelector(selector));
      const [severity, path, message, note, hint, where] = pieces.map((e) => e?.textContent?.trim() ?? '');
      return {
        text: (li.textContent ?? '').replace(/\s+/g, ' ').trim(),
        severity: severity!,
        path: path!,
        message: message!,
        note: note!,
        hint: hint!,
        where: where!,
        messageBottom: pieces[2]!.getBoundingClientRect().bottom,
        hintTop: pieces[4]?.getBoundingClientRect().top ?? null,
        whereTop: pieces[5]?.getBoundingClientRect().top ?? null,
      };
    }),
  );
}

async function expectHits(page: Page, names: string[]) {
  // Wait for these very hits: a count alone is also met by the previous answer, still shown.
  const want = JSON.stringify([...names].sort());
  await page
    .waitForFunction((w) => JSON.stringify([...document.querySelectorAll('.hit h2')].map((h) => h.textContent ?? '').sort()) === w, want)
    .catch(() => undefined);
  assert.deepEqual((await page.locator('.hit h2').allTextContents()).sort(), [...names].sort());
}
