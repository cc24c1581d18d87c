/**
 * A real browser for web page tests: Debian's Chromium (/usr/bin/chromium, installed by
 * .ci/chromium-setup.sh) driven by playwright-core, which never downloads a browser of its own.
 * One browser per test file, its pages in one off-the-record context (nothing kept on disk).
 *
 * Without Chromium the tests skip locally; under CI (CI set) they fail, so a missing install
 * step cannot hide behind a green run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { REPO_ROOT } from './registry.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'test-output', 'screenshots');

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why browser tests cannot run here, or undefined when they can. Throws under CI. */
export function browserUnavailable(): string | undefined {
  if (fs.existsSync(CHROMIUM_PATH)) return undefined;
  const reason = `${CHROMIUM_PATH} is missing (apt-get install -y chromium, or .ci/chromium-setup.sh)`;
  if (process.env.CI) throw new Error(`browser tests need Chromium under CI: ${reason}`);
  return reason;
}

/** A page that records what went wrong in it: console errors (CSP refusals among them) and uncaught exceptions. */
export type WatchedPage = Page & { problems: string[] };

export interface TestBrowser {
  context: BrowserContext;
  newPage(): Promise<WatchedPage>;
  close(): Promise<void>;
}

export async function launchBrowser(options: { viewport?: { width: number; height: number } } = {}): Promise<TestBrowser> {
  // An off-the-record context (as a private window), not a persistent profile on disk: the
  // browser process then keeps no history, disk cache or session to write at each navigation,
  // and a bench of navigations spent about 15 % less CPU (Chromium's and the test's) with it.
  // The page's storage (session and local storage, cookies) works in it as in any window.
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
  let context: BrowserContext;
  try {
    context = await browser.newContext({
      viewport: options.viewport ?? { width: 1100, height: 900 },
      // Only what the page asks of a real person's browser: the copy buttons write to the clipboard.
      permissions: ['clipboard-read', 'clipboard-write'],
    });
  } catch (err) {
    await browser.close();
    throw err;
  }
  return {
    context,
    async newPage() {
      const page: WatchedPage = Object.assign(await context.newPage(), { problems: [] as string[] });
      page.on('console', (m) => {
        if (m.type() === 'error') page.problems.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => page.problems.push(`uncaught: ${e.message}`));
      return page;
    },
    async close() {
      await context.close().catch(() => undefined);
      // Also removes the temporary profile Playwright gave the browser.
      await browser.close().catch(() => undefined);
    },
  };
}

/**
 * Whether screenshot() saves anything: with TEST_SCREENSHOTS=1 only. They are for a person to
 * look at, no test reads them, and the web page's 44 full-page screenshots took about a tenth of
 * its file's time in every run.
 */
const SAVE_SCREENSHOTS = process.env.TEST_SCREENSHOTS === '1';

/** With TEST_SCREENSHOTS=1, saves a full-page screenshot under test-output/screenshots for a person to look at, and returns its file. */
export async function screenshot(page: Page, name: string): Promise<string | undefined> {
  if (!SAVE_SCREENSHOTS) return undefined;
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

const AXE_SOURCE = path.join(REPO_ROOT, 'node_modules', 'axe-core', 'axe.min.js');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core (WCAG 2.1 A and AA rules: labels, names, contrast, landmarks, ...) on the page
 * as it is now. The script is evaluated through the DevTools protocol, which the page's CSP
 * does not govern; the page itself never loads it.
 */
export async function accessibilityViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(fs.readFileSync(AXE_SOURCE, 'utf8'));
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, options: object): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => JSON.stringify(n.target)) }));
  });
}
