/**
 * The web page in a real browser (Debian's Chromium driven by playwright-core) against a real
 * registry on 127.0.0.1: validating a card and registering one, and what the page says when
 * things go wrong: a registry closed to anonymous reads, rate limits, a refused token, a registry
 * that cannot be reached, proxies that answer their own page or never answer.
 *
 * One registry and one browser for the whole file (test/support/web-page.ts), as in
 * web.test.ts (search, entries, layout): two files, so that the two run side by side.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page, Route } from 'playwright-core';
import { request } from 'undici';
import { browserUnavailable, screenshot, type TestBrowser, type WatchedPage } from './support/browser.js';
import { dataPart, filePart, op, sdkClient, send, type WireJson } from './support/client.js';
import { mcpServer, toolspec, v1Card } from './support/documents.js';
import { freePort } from './support/ports.js';
import { removeTempDir, startTestRegistry, tempDir, TOKENS, type TestRegistry } from './support/registry.js';
import {
  assertAccessible,
  assertNoNestedLiveRegions,
  BROWSER_ACCEPT,
  brokenCard,
  expectHits,
  passDeadlines,
  passDeadlinesOnDemand,
  problemPieces,
  retirePage,
  startProxy as proxyInFront,
  startWebFixture,
  withPage as pageOf,
  type WebFixture,
} from './support/web-page.js';

const unavailable = browserUnavailable();

describe('web page: validating, registering, and when things go wrong', { skip: unavailable }, () => {
  let fixture: WebFixture | undefined;
  let registry: TestRegistry;
  let browser: TestBrowser;
  let ids: Record<string, string>;

  before(async () => {
    fixture = await startWebFixture();
    ({ registry, browser, ids } = fixture);
  });

  after(async () => {
    await fixture?.close();
  });

  /** A page as new (one page, put back between tests: see withPage in support/web-page.ts); at the end of the test nothing went wrong in it (console errors, exceptions, CSP refusals). */
  const withPage = <T>(fn: (page: WatchedPage) => Promise<T>): Promise<T> => pageOf(browser, fn);

  /** A real reverse proxy on 127.0.0.1 in front of the registry (see support/web-page.ts). */
  const startProxy = (answer: (res: http.ServerResponse) => boolean) => proxyInFront(registry.url, answer);

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
      // Each problem's link is named for its problem (its number, as its mark's, and its path),
      // the words on screen first: not the same name again and again in a list of links.
      const showNames = [...(await page.locator('.problems').ariaSnapshot()).matchAll(/\blink "(Show in the document[^"]*)"/g)].map((m) => m[1]);
      assert.ok(showNames.length >= 2 && showNames.length === (await page.locator('.problems li a').count()), showNames.join(' | '));
      assert.equal(new Set(showNames).size, showNames.length, showNames.join(' | '));
      const tagsNumber = (await page.locator('.problems > li').allTextContents()).findIndex((t) => t.includes('/skills/0/tags')) + 1;
      assert.ok(showNames.includes(`Show in the document: problem ${tagsNumber}, /skills/0/tags`), showNames.join(' | '));
      assert.equal(await tags.locator('a').innerText(), 'Show in the document');
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
      // The document is the field in error: marked invalid and described by the outcome, heard on the box.
      const documentBox = page.locator('#document');
      assert.equal(await documentBox.getAttribute('aria-invalid'), 'true');
      assert.deepEqual((await documentBox.getAttribute('aria-describedby'))?.split(' '), ['document-help', await page.locator('.validation-summary > [role=alert]').getAttribute('id')]);
      for (const part of ['.problems', '.doc']) {
        assert.equal(await page.locator(part).evaluate((el, live) => el.closest(live) === null, live), true, `${part} is in a live region`);
      }

      // Edited, it is no longer the document refused: no longer marked.
      await documentBox.press('End');
      await documentBox.press('Space');
      assert.equal(await documentBox.getAttribute('aria-invalid'), null);
      assert.equal(await documentBox.getAttribute('aria-describedby'), 'document-help');

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

      // A minified document, all its problems on one line, on a phone: their numbers wrap beside
      // the line instead of pushing it out of the box (17 in a row left it one letter wide).
      await page.setViewportSize({ width: 375, height: 800 });
      const skill = { id: 1, name: 2, description: 3, tags: 4 };
      await page.locator('#document').fill(JSON.stringify({ name: 1, description: 2, version: 3, capabilities: 7, defaultInputModes: 8, defaultOutputModes: 9, skills: [skill, skill] }));
      await page.locator('#document').press('Control+Enter');
      await page.locator('.problems li', { hasText: '/skills/1/tags' }).waitFor({ timeout: 5000 });
      const box = await page.locator('.doc-scroll').evaluate((scroll) => ({
        numbers: scroll.querySelectorAll('.marks a').length,
        sideways: scroll.scrollWidth - scroll.clientWidth,
        text: scroll.querySelector('td.text')!.getBoundingClientRect().width / scroll.clientWidth,
      }));
      assert.ok(box.numbers >= 10, `${box.numbers} numbers on the line: this check checks little`);
      assert.equal(box.sideways, 0, 'the document box scrolls sideways');
      assert.ok(box.text > 0.5, `the line has ${Math.round(box.text * 100)} % of its box`);
      await page.setViewportSize({ width: 1100, height: 900 });

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
      assert.equal(await page.locator('#document').getAttribute('aria-invalid'), null, 'a valid document is not marked invalid');
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
      // Typed on a phone, neither the URL nor the JSON is capitalised by the keyboard, nor spell-checked.
      for (const field of ['#mcp-url', '#document']) {
        const typing = await page.locator(field).evaluate((e) => [e.getAttribute('autocapitalize'), e.getAttribute('spellcheck')]);
        assert.deepEqual(typing, ['off', 'false'], field);
      }
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

  test('validate: a document or a file too large to send is the error of its field, marked invalid and described by the alert', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/validate`);
      const box = page.locator('#document');
      const file = page.locator('.file-label input[type=file]');
      // Over 1 MB in bytes (€ is three), set at once: typed or filled, a megabyte took seconds.
      await box.evaluate((area: HTMLTextAreaElement) => {
        area.value = '€'.repeat(350_000);
        area.dispatchEvent(new Event('input', { bubbles: true }));
      });
      const tooLarge = page.locator('[role=alert]', { hasText: 'This is over 1 MB' });
      await tooLarge.waitFor();
      assert.equal(await box.getAttribute('aria-invalid'), 'true');
      assert.deepEqual((await box.getAttribute('aria-describedby'))?.split(' '), ['document-help', await tooLarge.getAttribute('id')]);
      await box.fill('');
      await tooLarge.waitFor({ state: 'detached' });
      assert.equal(await box.getAttribute('aria-invalid'), null);
      assert.equal(await box.getAttribute('aria-describedby'), 'document-help');

      // A file dropped that is too large: said, and tied to the box and the file control.
      const dropped = await page.evaluateHandle(() => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(1024 * 1024 + 1)], 'huge.json', { type: 'application/json' }));
        return transfer;
      });
      await page.locator('.drop-zone').dispatchEvent('drop', { dataTransfer: dropped });
      const refused = page.locator('[role=alert]', { hasText: 'huge.json' });
      await refused.waitFor();
      const refusedId = await refused.getAttribute('id');
      assert.ok(refusedId);
      assert.equal(await file.getAttribute('aria-invalid'), 'true');
      assert.equal(await file.getAttribute('aria-describedby'), refusedId);
      assert.deepEqual((await box.getAttribute('aria-describedby'))?.split(' '), ['document-help', refusedId]);
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

  test('register: a refusal of the registration is told as such, beside the token; a failed check keeps its place; a URL of the document refused (FORBIDDEN) is marked in it, validating or registering', async () => {
    await withPage(async (page) => {
      await page.goto(`${registry.url}/validate`);
      // The invoice agent's URL is alice's: bob may not register a card at it.
      await page.locator('#document').fill(JSON.stringify(v1Card('Taken Url Agent', 'https://invoices.example.org/a2a'), null, 2));
      const register = page.locator('section.register');
      const refusal = register.locator('[role=alert]');
      // (bob's FORBIDDEN, a URL of the document refused, is told against the document: below.)
      for (const [token, code] of [['not-a-real-token-0123456789', 'UNAUTHENTICATED']] as const) {
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

      // A URL of the document refused (FORBIDDEN): another principal's, as bob registers it, or the
      // registry's own endpoint, as alice validates it. Which field and why, against the document as
      // a validation's errors are: it was only the registry's message, above or beside the token.
      const ownUrl = ((await (await request(`${registry.url}/.well-known/agent-card.json`)).body.json()) as WireJson).supportedInterfaces[0].url as string;
      for (const [token, button, url, message] of [
        [TOKENS.bob, 'Register', 'https://invoices.example.org/a2a', /identifies entry .*, which belongs to another principal/],
        [TOKENS.alice, 'Validate', ownUrl, /is an endpoint of this registry itself/],
      ] as const) {
        await page.locator('#document').fill(JSON.stringify(v1Card('Refused Url Agent', url), null, 2));
        await page.locator('#token').fill(token);
        await page.getByRole('button', { name: button, exact: true }).click();
        await page.locator('.validation-summary [role=alert]', { hasText: 'FORBIDDEN' }).waitFor();
        page.problems.length = 0;
        assert.match(await page.locator('.validation-summary').innerText(), /^Refused FORBIDDEN\s/);
        const [problem, ...more] = await problemPieces(page);
        assert.equal(more.length, 0);
        assert.equal(problem!.path, '/supportedInterfaces/0/url');
        assert.match(problem!.message, message);
        assert.match(problem!.where, /Show in the document/);
        assert.equal(await register.locator('[role=alert]').count(), 0, 'nothing beside the token');
      }
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
        // The reads of the document the page asked (each counts against the person's rate-limited reads).
        const asked: number[] = [];
        page.on('request', (r) => void (r.url() === rawUrl.href && asked.push(Date.now())));
        const [download] = await Promise.all([page.waitForEvent('download'), raw.click()]);
        // The link has no copy yet (as one more than 10 s old): the pointer reaching it read the
        // document ahead of the click, and the click took that read's answer, not a second read.
        assert.equal(asked.length, 1, 'reads of the document for one click');
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
        // The page loaded anew, the link has no copy: the pointer reaching it reads the document
        // ahead of the click (DocumentLink's prepareAhead), and that read is refused. The click
        // says that refusal, as its own: it does not read again (and, held, wait the 2 s out unsaid).
        await page.mouse.move(0, 0); // not left over the link: the hover below reaches it
        await page.reload();
        await page.locator('h1', { hasText: 'Closed Door Agent' }).waitFor();
        const refuse = async (route: Route) => {
          await route.fulfill({
            status: 429,
            headers: { 'retry-after': '2', 'content-type': 'application/json' },
            body: JSON.stringify({ errorCode: 'RESOURCE_EXHAUSTED', registryCode: 'RATE_LIMITED', message: 'Too many reads (search, get, list, validate) from this address: the limit is 2 per minute. Retry after 2 s.' }),
          });
        };
        await page.route(rawUrl.href, refuse);
        const beforeRefusal = asked.length;
        await Promise.all([page.waitForResponse((r) => r.url() === rawUrl.href && r.status() === 429), raw.hover()]);
        await raw.click();
        await page.locator('[role=alert]', { hasText: 'RATE_LIMITED' }).waitFor();
        assert.equal(asked.length - beforeRefusal, 1, 'reads of the document: the one ahead of the click, refused');
        await page.unroute(rawUrl.href, refuse);
        page.problems.length = 0; // the browser logs the refused request (429) itself
        const refusedAt = asked[asked.length - 1]!;
        const held = await page.evaluate(() => JSON.parse(sessionStorage.getItem('a2a-registry.rate-wait') ?? '{}') as { read?: number });
        assert.ok((held.read ?? 0) > Date.now(), 'the refusal holds the page\'s reads');
        const downloaded = page.waitForEvent('download');
        await raw.click();
        // The click waits for the wait to end, and says so: it showed nothing meanwhile, the refusal's
        // notice left on screen as if the click had done nothing.
        const heldDownload = page.locator('.download-held[role=status]');
        await heldDownload.filter({ hasText: /^Downloading card\.json in \d+ s\s*\d+ s\s*, when the registry allows it\.$/ }).waitFor({ timeout: 1500 });
        assert.equal(await page.locator('[role=alert]').count(), 0, 'the refusal is no longer shown once the click waits');
        const waited = await downloaded;
        assert.equal(JSON.parse(fs.readFileSync((await waited.path())!, 'utf8')).name, 'Closed Door Agent');
        await page.locator('.download-held:empty').waitFor({ state: 'attached', timeout: 2000 });
        const after = asked.filter((at) => at > refusedAt).map((at) => at - refusedAt);
        // Once: the click's own read, asked when the wait was over (none ahead of it while the wait lasts).
        assert.ok(after.length === 1 && after[0]! >= 1900, `asked again ${after.join(', ')} ms after the refusal`);

        // Refused by the address's request limit instead (the catalog door's flood guard, in its
        // words): that limit counts every request, so the refusal holds the page's writes as well
        // as its reads, and is said as the page says it for a search or a check refused so.
        // Every read refused until it is shown (a read ahead of the click, on a machine slow
        // enough that the link's copy is more than 10 s old by then, is refused and said as the
        // click's). The alert is waited for without a bound of its own.
        const refuseWhole = (route: Route) =>
          route.fulfill({
            status: 429,
            headers: { 'retry-after': '2', 'content-type': 'application/json' },
            body: JSON.stringify({ errorCode: 'RATE_LIMIT_EXCEEDED', registryCode: 'RATE_LIMITED', retryAfterSeconds: 2, message: 'Too many requests from this address: the limit is 150 per minute. Retry after 2 s.' }),
          });
        await page.route(rawUrl.href, refuseWhole);
        await raw.click();
        await page.locator('[role=alert]', { hasText: 'searches, entries, downloads, checks and registrations count together' }).waitFor();
        await page.unroute(rawUrl.href, refuseWhole);
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
        // The wait counts down on screen; a screen reader is told it once (in the alert, and
        // politely the wait's end), not each second: the counting number is hidden from it.
        const told = await notice.ariaSnapshot();
        assert.match(told, /Try again in \d+ s \./, told);
        const shown = Number(/in (\d+) s/.exec(await notice.innerText())?.[1]);
        await page.waitForFunction((n) => Number(/Try again in (\d+) s/.exec((document.querySelector('[role=alert]') as HTMLElement | null)?.innerText ?? '')?.[1]) < n, shown, { timeout: 3000 });
        assert.equal(await notice.ariaSnapshot(), told);
        // The wait's end is said beside the alert, not inside it (nested, a screen reader says it twice).
        await assertNoNestedLiveRegions(page, 'a rate-limited search');
        assert.equal(await page.locator('.notice.error > [role=status]').count(), 1);

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
        retirePage(page); // the cache stays disabled with the page
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
        // In a main landmark, as the page's own views are: a screen reader going by landmarks found none.
        assert.deepEqual(await page.getByRole('main').getByRole('heading', { level: 1 }).allInnerTexts(), ['Too many requests']);
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
      // The field is described by the refusal above it (heard on the field, not only once as it came).
      const tokenField = page.locator('#read-token');
      assert.deepEqual((await tokenField.getAttribute('aria-describedby'))?.split(' '), [await refusal.getAttribute('id'), 'read-token-help']);
      assert.equal(await tokenField.getAttribute('aria-invalid'), null, 'nothing typed in it yet');
      // Another token refused: the prompt is drawn again, with the focus in its field to type a third.
      await page.locator('#read-token').fill('mistyped-token-0123456789abcdef');
      await page.getByRole('button', { name: 'Use this token' }).click();
      await page.waitForFunction(() => document.activeElement?.id === 'read-token', undefined, { timeout: 5000 });
      await refusal.waitFor();
      // Said as the token just typed, not as one kept from before ("kept in this tab … Type yours below").
      assert.match(await refusal.innerText(), /does not accept the token just typed: it may be mistyped, or no longer valid\. Type it again below, or read without a token\./);
      assert.doesNotMatch(await refusal.innerText(), /kept in this tab/);
      // The token typed is the field's error: invalid, described by the refusal.
      assert.equal(await tokenField.getAttribute('aria-invalid'), 'true');
      assert.deepEqual((await tokenField.getAttribute('aria-describedby'))?.split(' '), [await refusal.getAttribute('id'), 'read-token-help']);
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
      assert.deepEqual((await page.locator('#compare-token').getAttribute('aria-describedby'))?.split(' '), [
        await page.locator('.diff [role=alert]').getAttribute('id'),
        'compare-token-help',
      ]);
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
    // The seconds the proxy's rate limit asks to wait.
    let rateLimitWait = 2;
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
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(rateLimitWait) }).end(JSON.stringify({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Too many requests.' } }));
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
        await page.locator('.notice.error', { has: refused }).getByRole('status').filter({ hasText: /^The wait is over: the registry takes requests again\.$/ }).waitFor({ timeout: 4000 });
        assert.equal(await refused.getByRole('button', { name: 'Try again' }).isEnabled(), true);
        assert.doesNotMatch(await refused.innerText(), /Try again in/, 'the countdown leaves with the wait');
        await assertNoNestedLiveRegions(page, 'a rate limit whose wait is over');

        // A request refused whole (HTTP 429, before the registry reads it) limits every request
        // from the address, not the kind of operation refused: said so, and a registration
        // asked next waits as well (it was asked at once, as if only reads were limited, and
        // refused again).
        status = 429;
        // Longer: the steps from the refusal to the registration's click must fit in the wait on a loaded machine.
        rateLimitWait = 4;
        await page.locator('[data-nav=validate]').click();
        await page.locator('#document').fill(JSON.stringify(v1Card('Proxied Agent', 'https://proxied.example.org/a2a')));
        await page.getByRole('button', { name: 'Validate', exact: true }).click();
        const limited = page.locator('.validation-summary [role=alert]', { hasText: 'RATE_LIMITED' });
        await limited.waitFor();
        page.problems.length = 0; // the browser logs the refused request (429) itself
        assert.match(await limited.innerText(), /Too many requests from this address: searches, entries, downloads, checks and registrations count together \(and so does loading this page\), so each waits until the limit allows it again\.\s+Try again in [1-4] s/);
        const validatedAt = calls.length;
        await page.locator('#token').fill(TOKENS.alice);
        await page.getByRole('button', { name: 'Register', exact: true }).click();
        await page.locator('.register-result', { hasText: /^Registering in [1-4] s\s*[1-4] s\s*, when the registry allows it\.$/ }).waitFor({ timeout: 3000 });
        assert.equal(calls.length, validatedAt, 'registered during the wait');
      });
    } finally {
      await proxy.close();
    }
  });

  test('the page\'s own files refused by the request limit: the loading note says so, not only "check your connection"', async () => {
    // One request a minute: the page itself is let through, its script and stylesheet refused (429).
    const limited = await startTestRegistry({ REGISTRY_RATE_REQUESTS_PER_MINUTE: '1' });
    try {
      await withPage(async (page) => {
        const refused: string[] = [];
        page.on('response', (res) => void (res.status() === 429 && refused.push(new URL(res.url()).pathname)));
        const answer = await page.goto(`${limited.url}/`);
        assert.equal(answer?.status(), 200);
        const loading = page.locator('main .page-loading');
        await page.waitForFunction(() => document.querySelector('script[type=module]') !== null);
        await page.waitForLoadState('load');
        assert.ok(refused.some((p) => /^\/assets\/main-[\w-]+\.js$/.test(p)), `refused: ${refused.join(', ')}`);
        await page.evaluate(() => document.getAnimations().forEach((a) => a.finish())); // the note's 15 s pass, if the stylesheet came
        assert.match(
          await loading.innerText(),
          /Still loading: check your connection, then reload the page\. If this address has sent the registry more requests in the last minute than it takes \(an office or a proxy shares one\), the page's files were refused: reload it in a minute\./,
        );
        await screenshot(page, 'page-files-refused');
        // The browser logs each refused file itself, whenever it asks for it (the icon can be
        // asked for after the load event): the refusal (429), and the stylesheet's JSON answer
        // not applied as a stylesheet. Those lines are expected here; nothing else is.
        const expected = [
          /^console: Failed to load resource: the server responded with a status of 429 /,
          /^console: Refused to apply style from '[^']+\/assets\/styles-[\w-]+\.css' because its MIME type \('application\/json'\)/,
        ];
        const others = page.problems.filter((p) => !expected.some((line) => line.test(p)));
        page.problems.splice(0, page.problems.length, ...others);
      });
    } finally {
      await limited.close();
    }
  });

  test('a Retry-After of days is held for a minute at most, one given as an HTTP-date is counted down, and neither locks the tab', async () => {
    // A rate limit in front of the registry naming its wait in either form of RFC 9110 10.2.3.
    let retryAfter: string | undefined;
    const proxy = await startProxy((res) => {
      if (retryAfter === undefined) return false;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter }).end(JSON.stringify({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Too many requests.' } }));
      return true;
    });
    /** The seconds the notice and the search's count say to wait, and the wait the tab keeps (seconds from now). */
    const waits = async (page: WatchedPage) => {
      const refused = page.locator('[role=alert]', { hasText: 'RATE_LIMITED' });
      await refused.waitFor();
      page.problems.length = 0; // the browser logs the refused request (429) itself
      const said = /Try again in (\d+) s/.exec(await refused.innerText())?.[1];
      const kept = await page.evaluate(() => {
        const saved = JSON.parse(sessionStorage.getItem('a2a-registry.rate-wait') ?? '{}') as Record<string, number>;
        return Math.max(...Object.values(saved).map((until) => Math.round((until - Date.now()) / 1000)));
      });
      return { said: Number(said), kept };
    };
    const searchWait = async (page: Page) => {
      const count = page.locator('#result-count', { hasText: /^Searching in \d+ s/ });
      await count.waitFor({ timeout: 5000 });
      return Number(/in (\d+) s/.exec(await count.innerText())?.[1]);
    };
    try {
      // Days (or a garbled number): "Searching in 99999999998 s", every read and write of the tab
      // held as long, after a reload too. A minute at most now, the registry's own longest wait.
      await withPage(async (page) => {
        retryAfter = '99999999999';
        await page.goto(`${proxy.url}/?q=weather`);
        const { said, kept } = await waits(page);
        assert.ok(said > 0 && said <= 60, `the notice says to wait ${said} s`);
        assert.ok(kept > 0 && kept <= 60, `the tab keeps a wait of ${kept} s`);
        await page.reload();
        const afterReload = await searchWait(page);
        assert.ok(afterReload > 0 && afterReload <= 60, `after a reload, the search waits ${afterReload} s`);
        // A wait of days kept in the tab before (by an older page): no longer than a minute either.
        await page.evaluate(() => sessionStorage.setItem('a2a-registry.rate-wait', JSON.stringify({ read: Date.now() + 1e14, write: Date.now() + 1e14 })));
        await page.reload();
        const kept2 = await searchWait(page);
        assert.ok(kept2 > 0 && kept2 <= 60, `a kept wait of days: the search waits ${kept2} s`);
      });
      // An HTTP-date 9 s ahead: was NaN, and no wait at all; now counted down to that time.
      await withPage(async (page) => {
        retryAfter = new Date(Date.now() + 9500).toUTCString();
        await page.goto(`${proxy.url}/?q=weather`);
        const { said, kept } = await waits(page);
        assert.ok(said >= 5 && said <= 10, `the notice says to wait ${said} s`);
        assert.ok(kept >= 5 && kept <= 10, `the tab keeps a wait of ${kept} s`);
        // A date past, or neither form: no wait.
        for (const value of [new Date(Date.now() - 60_000).toUTCString(), 'soon']) {
          await page.evaluate(() => sessionStorage.clear());
          retryAfter = value;
          await page.goto(`${proxy.url}/?q=weather&kind=agent`);
          const refused = page.locator('[role=alert]', { hasText: 'RATE_LIMITED' });
          await refused.waitFor();
          page.problems.length = 0; // the browser logs the refused request (429) itself
          assert.doesNotMatch(await refused.innerText(), /Try again in \d+ s/, `Retry-After: ${value}`);
        }
      });
    } finally {
      retryAfter = undefined;
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
        // As a person sees it: the browser paints nothing before the stylesheet (render-blocking),
        // which hides the late note; read before it arrived (a loaded machine), the text had it.
        await page.waitForFunction(() => [...document.querySelectorAll('link[rel=stylesheet]')].every((link) => (link as HTMLLinkElement).sheet !== null));
        assert.equal(await loading.innerText(), 'Loading…');
        await page.evaluate(() => document.getAnimations().forEach((a) => a.finish())); // the 15 s pass
        assert.match(await loading.innerText(), /^Loading… Still loading: check your connection, then reload the page\. If this address has sent the registry more requests/);
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
        // No status inside a busy element (a screen reader holds back what changes in one, and
        // "Loading revision 2…" went unsaid); what the revision draws is busy.
        const liveRegions = await page.evaluate(() =>
          [...document.querySelectorAll('[role=status], [role=alert], [role=log], [aria-live]:not([aria-live=off])')].map((el) => ({
            what: el.className || el.textContent || el.tagName,
            busy: el.closest('[aria-busy=true]')?.className ?? null,
          })),
        );
        assert.ok(liveRegions.some((r) => r.what.includes('entry-switching')) && liveRegions.some((r) => r.what === 'copy-status') && liveRegions.some((r) => r.what.includes('download-held')), 'the statuses are found');
        assert.deepEqual(liveRegions.filter((r) => r.busy !== null), [], 'no live region inside a busy element');
        for (const part of ['.entry-head', '.entry-document', 'table.revisions', '.interfaces li > span', 'details pre']) {
          assert.equal(await page.locator(part).first().getAttribute('aria-busy'), 'true', `${part} is busy`);
        }
        await screenshot(page, 'entry-revision-coming');
        hold = false;
        await passDeadlines(page);
        // It did not come: the revision on screen stays, beside the failure, no longer "Loading".
        const notCome = page.locator('[role=alert]', { hasText: 'TIMEOUT' });
        await notCome.waitFor({ timeout: 5000 });
        assert.match(await notCome.innerText(), /Revision 2 could not be loaded; revision 3 is still shown/);
        assert.equal(await page.locator('h1').innerText(), 'Invoice Agent');
        assert.equal(await page.locator('.entry-page > [role=status]').innerText(), '');
        assert.equal(await page.locator('.entry-page [aria-busy=true]').count(), 0, 'nothing busy once the switch ends');
        assert.equal(await page.locator('.entry-head').getAttribute('aria-busy'), 'false');
        await page.getByRole('button', { name: 'Try again' }).click();
        await page.locator('.entry-head', { hasText: 'not the current one' }).waitFor();
        assert.equal(await page.locator('.entry-page > [role=status]').innerText(), '');
        assert.equal(await page.locator('.entry-page [aria-busy=true]').count(), 0, 'nothing busy once the revision came');

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
        // (Its deadline is set as the file is asked for, after "Loading…" shows: released before
        // it was set, it would be held for ever.)
        let chunkAsked!: () => void;
        const asked = new Promise<void>((resolve) => (chunkAsked = resolve));
        await page.route(`${proxy.url}/assets/chunk-*.js`, () => chunkAsked());
        await page.locator('[data-nav=validate]').click();
        await page.locator('main [role=status]', { hasText: 'Loading…' }).waitFor();
        await asked;
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
});
