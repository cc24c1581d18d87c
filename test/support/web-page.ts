/**
 * What the web page's browser tests share (test/web.test.ts and test/web-forms.test.ts, two files
 * so that CI runs them side by side, each with its own registry and browser): the registry they
 * run against, filled with the entries the tests look for, the browser, and the page helpers.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { buildWebAssets, type WebBuildResult } from '../../web/build.js';
import { ANSWER_DEADLINE_MS } from '../../web/src/deadline.js';
import { signCard } from '../../src/trust/card-signing.js';
import { generateSigningKey, parseSigningKey } from '../../src/trust/jwks.js';
import { ACCEPTED_ALGORITHMS } from '../../src/validation/signature.js';
import { accessibilityViolations, launchBrowser, type TestBrowser, type WatchedPage } from './browser.js';
import { op, resultOf, sdkClient, type WireJson } from './client.js';
import { mcpServer, toolspec, v03Card, v1Card } from './documents.js';
import { serveCard } from './freshness.js';
import { startOrigin, type OriginServer } from './origin-server.js';
import { removeTempDir, startTestRegistry, tempDir, TOKENS, type TestRegistry } from './registry.js';


export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
export const FILLERS = 22;

export function securedCard() {
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
export function fillerCard(i: number) {
  const card: WireJson = v1Card(`Filler Agent ${String(i).padStart(2, '0')}`, `https://filler-${i}.example.org/a2a`);
  // "filler" only in the name: one hit per entry, with or without results per entry.
  card.description = `Agent number ${i}, for paging.`;
  card.skills = [{ id: 'fill', name: 'Fill a page', description: 'Fills a page of results.', tags: ['paging'] }];
  return card;
}

export const brokenCard = () => {
  const card: WireJson = v1Card('Broken Agent', 'https://broken.example.org/a2a');
  card.skills[0].tags = 'finance';
  delete card.version;
  return JSON.stringify(card, null, 2);
};

/**
 * The page's timers of `ms` (setTimeout) wait until the test releases them (releaseTimers with the
 * same `name`) instead of running out on their own; every other timer runs as it does. For this
 * page only: the clock Playwright offers is the whole browser's, which the other tests share.
 * Each held timer remembers the URL (its search) it was set at, for releaseTimers to wait for.
 */
export async function holdTimers(page: Page, ms: number, name: string) {
  const script = await page.addInitScript(
    ([heldMs, releaseName]) => {
      const realSet = window.setTimeout.bind(window);
      const realClear = window.clearTimeout.bind(window);
      const due = new Map<number, { fn: (...args: unknown[]) => void; args: unknown[]; setAt: string }>();
      let nextId = 1e9 + heldMs * 1e3;
      window.setTimeout = ((fn: (...args: unknown[]) => void, timeout?: number, ...args: unknown[]) => {
        if (timeout !== heldMs) return realSet(fn, timeout, ...args);
        const id = nextId++;
        // No function written in an object here: tsx names those with a helper the page lacks.
        due.set(id, { fn, args, setAt: window.location.search });
        return id;
      }) as typeof window.setTimeout;
      window.clearTimeout = ((id?: number) => {
        if (id === undefined || !due.delete(id)) realClear(id);
      }) as typeof window.clearTimeout;
      Object.assign(window, {
        [releaseName]() {
          const held = [...due.values()];
          due.clear();
          for (const timer of held) timer.fn(...timer.args);
        },
        [`${releaseName}Held`]: () => [...due.values()].map((timer) => timer.setAt),
      });
    },
    [ms, name] as const,
  );
  // Not for the next test on this page (see withPage).
  undoBeforeReuse(page, () => script.dispose());
}

/**
 * The timers held by holdTimers(page, ms, name) run now; resolves once they have. First waits for
 * one set at the URL the page is at: a filter's change writes the URL before the page's effect
 * sets its pause (by a frame or more on a busy machine), and released before, that pause stayed
 * held and its search never ran. `setEarlier`: the timers to run were set before the page moved
 * (typing, then Back), none is waited for.
 */
export async function releaseTimers(page: Page, name: string, { setEarlier = false } = {}) {
  if (!setEarlier) {
    const heldHere = (n: string) => (window as unknown as Record<string, () => string[]>)[`${n}Held`]!().includes(window.location.search);
    await page.waitForFunction(heldHere, name);
    // Then once the page is idle, again: a change's effect that ran after the next change had
    // written the URL set its pause at that URL too, and its cleanup (clearing it) and the next
    // change's effect (setting the one to release) were still to run. Released then, the stale
    // pause asked its search, which the cleanup aborted, and the one set after stayed held.
    await page.evaluate(() => new Promise<void>((resolve) => requestIdleCallback(() => resolve(), { timeout: 2000 })));
    await page.waitForFunction(heldHere, name);
  }
  await page.evaluate((n) => (window as unknown as Record<string, () => void>)[n]!(), name);
}

/** The page's deadline timers (ANSWER_DEADLINE_MS) wait for passDeadlines instead of 20 s. */
export const passDeadlinesOnDemand = (page: Page) => holdTimers(page, ANSWER_DEADLINE_MS, 'passDeadlines');

/**
 * The deadlines of the requests in flight pass now (see passDeadlinesOnDemand). The tests call it
 * once the request has arrived: its deadline was set as it was sent.
 */
export const passDeadlines = (page: Page) => releaseTimers(page, 'passDeadlines', { setEarlier: true });

/** The search box's typing pause (web/src/pages/search.tsx), after which the URL follows the words. */
export const TYPING_PAUSE_MS = 250;

/** The registry, origin and browser the tests of one file share, and the ids of the entries it holds. */
export interface WebFixture {
  registry: TestRegistry;
  browser: TestBrowser;
  build: WebBuildResult;
  origin: OriginServer;
  ids: Record<string, string>;
  close(): Promise<void>;
}

/**
 * Builds the page's assets (so the tests run against the current sources), starts a registry
 * holding the entries the tests look for and a browser.
 */
export async function startWebFixture(): Promise<WebFixture> {
  const ids: Record<string, string> = {};
  const trustDir = tempDir('a2a-registry-web-trust-');
  let registry: TestRegistry | undefined;
  let origin: OriginServer | undefined;
  let browser: TestBrowser | undefined;
  const close = async () => {
    await browser?.close();
    await registry?.close();
    await origin?.close();
    removeTempDir(trustDir);
  };
  try {
    const build = await buildWebAssets();
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
    return { registry, browser, build, origin, ids, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The tests of a file take turns on one page, put back between them as a new page is. A new page
 * for each test cost Chromium about a second of CPU (a renderer started, the page's code compiled
 * anew), most of what web.test spent besides the tests' own steps; a navigation on a page already
 * open costs a fraction of it. What a test leaves on the page is undone before the next takes it:
 * its routes and listeners, its init scripts (holdTimers), the viewport and colour scheme, where
 * the mouse was, the tab's session storage (token, rate waits, validate draft) and its history
 * (tests count history entries and go Back to before their first page: about:blank, as on a new
 * page). A page a test changed in a way that cannot be undone (retirePage), or one whose test
 * failed, is closed and the next test gets a new one.
 */
const sparePages = new WeakMap<TestBrowser, WatchedPage>();
const retired = new WeakSet<Page>();
/** What the test did to the page that the next must not find there (an init script's removal). */
const undoings = new WeakMap<Page, (() => Promise<unknown>)[]>();
const undoBeforeReuse = (page: Page, undo: () => Promise<unknown>) => {
  const undos = undoings.get(page) ?? [];
  undos.push(undo);
  undoings.set(page, undos);
};
/** The origins whose documents the page showed in the test: each may hold the tab's session storage. */
const originsShown = new WeakMap<Page, Set<string>>();
const newViewport = new WeakMap<Page, { width: number; height: number } | null>();
/** The page events tests listen to (the problems watchers use console and pageerror, which stay). */
const TEST_EVENTS = ['request', 'response', 'requestfinished', 'requestfailed', 'download', 'dialog', 'popup'] as const;

/** The page keeps something a reset cannot undo (a DevTools session's settings): withPage closes it after the test. */
export function retirePage(page: Page) {
  retired.add(page);
}

async function takePage(browser: TestBrowser): Promise<WatchedPage> {
  const spare = sparePages.get(browser);
  sparePages.delete(browser);
  if (spare) return spare;
  const page = await browser.newPage();
  newViewport.set(page, page.viewportSize());
  const origins = new Set<string>();
  originsShown.set(page, origins);
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame() && /^https?:/.test(frame.url())) origins.add(new URL(frame.url()).origin);
  });
  return page;
}

/** Puts the page back as a new page is (see sparePages); false when it cannot be. */
async function resetPage(page: WatchedPage): Promise<boolean> {
  if (retired.has(page)) return false;
  try {
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    for (const event of TEST_EVENTS) page.removeAllListeners(event);
    for (const undo of undoings.get(page)?.splice(0) ?? []) await undo();
    // The session storage of each origin shown, cleared from a document of that origin (a 404 of
    // its own is one; the registry's for /assets/ is JSON, not the page): DevTools clears it only
    // for a frame showing the origin.
    const origins = originsShown.get(page)!;
    for (const origin of origins) {
      if (new URL(page.url()).origin !== origin) await page.goto(`${origin}/assets/page-reset-no-such-file`).catch(() => undefined);
      await page.evaluate(() => sessionStorage.clear()).catch(() => undefined);
    }
    origins.clear();
    // Asked by the page, not by the browser: a blank page the browser opens itself takes a new
    // renderer process, one more started (and the page's code compiled anew) for every test.
    if (page.url() === 'about:blank') await page.goto('about:blank');
    else await Promise.all([page.waitForURL('about:blank'), page.evaluate(() => void window.location.assign('about:blank')).catch(() => undefined)]);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Page.resetNavigationHistory');
    await cdp.detach();
    const viewport = newViewport.get(page);
    if (viewport) await page.setViewportSize(viewport);
    await page.emulateMedia({ media: null, colorScheme: 'light' });
    await page.mouse.move(0, 0);
    page.problems.length = 0;
    return true;
  } catch {
    return false;
  }
}

/** A page as new; at the end of the test nothing went wrong in it (console errors, exceptions, CSP refusals). */
export async function withPage<T>(browser: TestBrowser, fn: (page: WatchedPage) => Promise<T>): Promise<T> {
  const page = await takePage(browser);
  let passed = false;
  try {
    const result = await fn(page);
    assert.deepEqual(page.problems, [], 'the page logged errors');
    passed = true;
    return result;
  } finally {
    if (passed && (await resetPage(page))) sparePages.set(browser, page);
    else await page.close();
  }
}

/**
 * A real reverse proxy on 127.0.0.1 in front of the registry: `answer` takes each A2A call
 * (message:send) it wants to answer itself (returns true); everything else passes through.
 */
export async function startProxy(registryUrl: string, answer: (res: http.ServerResponse) => boolean): Promise<{ url: string; close(): Promise<void> }> {
  const proxy = http.createServer((req, res) => {
    if (req.url?.endsWith('/a2a/rest/message:send') && answer(res)) {
      req.resume();
      return;
    }
    const upstream = http.request(`${registryUrl}${req.url}`, { method: req.method, headers: req.headers }, (passed) => {
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

/** Live regions inside another (a screen reader says what is put in them twice: once for each). */
export async function assertNoNestedLiveRegions(page: Page, what: string) {
  const nested = await page.evaluate((live) => {
    const inner = [...document.querySelectorAll(live)].filter((el) => el.parentElement?.closest(live));
    return inner.map((el) => `${el.outerHTML.slice(0, 60)} in ${el.parentElement!.closest(live)!.outerHTML.slice(0, 60)}`);
  }, '[aria-live], [role=status], [role=alert], [role=log]');
  assert.deepEqual(nested, [], `live regions inside live regions on ${what}`);
}

export async function assertAccessible(page: Page, what: string) {
  const violations = await accessibilityViolations(page);
  assert.deepEqual(violations, [], `accessibility violations on ${what}: ${JSON.stringify(violations, null, 2)}`);
}

export interface ProblemPieces {
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
export function problemPieces(page: Page): Promise<ProblemPieces[]> {
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

export async function expectHits(page: Page, names: string[]) {
  // Wait for these very hits: a count alone is also met by the previous answer, still shown.
  const want = JSON.stringify([...names].sort());
  await page
    .waitForFunction((w) => JSON.stringify([...document.querySelectorAll('.hit h2')].map((h) => h.textContent ?? '').sort()) === w, want)
    .catch(() => undefined);
  assert.deepEqual((await page.locator('.hit h2').allTextContents()).sort(), [...names].sort());
}

