import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchOfflineChromium, type OfflineBrowser } from '../support/chromium.ts';
import { type Stack, startStack } from '../support/fixtures.ts';

/**
 * GraphiQL as a partner uses it: `npm start` on the embedded sandbox with the development secret,
 * opened from this machine in Chromium that may not reach anything but loopback.
 */

/** Operation names of src/client/operations.graphql, in document order. */
const EXAMPLE_OPERATIONS = [
  ...readFileSync(new URL('../../src/client/operations.graphql', import.meta.url), 'utf8').matchAll(
    /^(?:query|mutation|subscription) (\w+)/gm,
  ),
].map((match) => match[1]!);

/** Longest wait for something to show in the page (ms); generous for a loaded 2-core machine. */
const SHOWS_WITHIN = { timeout: 15_000 };

let stack: Stack;
let browser: OfflineBrowser;

beforeAll(async () => {
  // No AUTH_JWT_SECRET: embedded mode falls back to the development secret, as `npm start` does.
  [stack, browser] = await Promise.all([startStack({ AUTH_JWT_SECRET: '' }), launchOfflineChromium()]);
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Length of the stack's log so far, for {@link logLinesAfter}. */
function logLength(): number {
  return readFileSync(stack.logFile, 'utf8').length;
}

/** JSON log lines the stack wrote after `offset` (a {@link logLength}). */
function logLinesAfter(offset: number): Record<string, unknown>[] {
  return readFileSync(stack.logFile, 'utf8')
    .slice(offset)
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Opens GraphiQL and waits for the example document to show in the editor. */
async function openGraphiQL(): Promise<void> {
  const { page } = browser;
  await page.goto(`${stack.url}/graphql`);
  await page.locator('.graphiql-query-editor').getByText('query Me').waitFor(SHOWS_WITHIN);
}

/** Clicks Run and picks `operation` from its menu (the document holds several operations). */
async function run(operation: string): Promise<void> {
  const { page } = browser;
  await page.getByRole('button', { name: /^Execute query/ }).click();
  await page.getByRole('menuitem', { name: operation, exact: true }).click();
}

/** `text` with Monaco's no-break spaces as spaces. */
function normalize(text: string): string {
  return text.replace(/\u00a0/g, ' ');
}

/** Text of the first page's GraphiQL result pane. */
async function resultText(): Promise<string> {
  return normalize(await browser.page.locator('.graphiql-response').innerText());
}

describe('GraphiQL served whole by the gateway, in Chromium with no network', () => {
  it('opens on the example operations, runs a query and streams a live card event', {
    timeout: 90_000,
  }, async () => {
    const { page } = browser;
    await openGraphiQL();
    await page.screenshot({ path: '/tmp/cardgraph-graphiql-opened.png' });

    // The whole example document is in the editor and parses: Run offers each of its operations.
    await page.getByRole('button', { name: /^Execute query/ }).click();
    await expect
      .poll(() => page.getByRole('menuitem').allTextContents(), SHOWS_WITHIN)
      .toEqual(EXAMPLE_OPERATIONS);
    await page.keyboard.press('Escape');

    // The development token is in the headers pane, so a query runs as a person would run it.
    await run('Me');
    await expect.poll(() => resultText(), SHOWS_WITHIN).toContain('"subject": "graphiql"');
    await page.screenshot({ path: '/tmp/cardgraph-graphiql-query.png' });

    // A subscription started in the page shows the event of an enrolment made meanwhile, here from
    // a second GraphiQL tab as the walk-through of docs/partners.md does: EnrolCardWithWebhook's default card
    // (4000210000395001) is a normal card, so the event's card join reads it back.
    await run('LiveCardEvents');
    await expect.poll(() => stack.app.events?.subscriberCount('tntsandbox1'), SHOWS_WITHIN).toBe(1);
    const second = await browser.context.newPage();
    try {
      await second.goto(`${stack.url}/graphql`);
      await second.locator('.graphiql-query-editor').getByText('query Me').waitFor(SHOWS_WITHIN);
      await second.getByRole('button', { name: /^Execute query/ }).click();
      await second.getByRole('menuitem', { name: 'EnrolCardWithWebhook', exact: true }).click();
      const enrolment = second.locator('.graphiql-response');
      await expect
        .poll(async () => normalize(await enrolment.innerText()), SHOWS_WITHIN)
        .toContain('"state": "ENROLLING"');
      const cardId = /"cardId": "(CRD\w+)"/.exec(normalize(await enrolment.innerText()))?.[1];
      expect(cardId).toMatch(/^CRD\w{22}$/);
      await expect.poll(() => resultText(), SHOWS_WITHIN).toContain(`"cardId": "${cardId}"`);
    } finally {
      await second.close();
    }
    const event = await resultText();
    expect(event).toContain('"type": "ENROLLED"');
    expect(event).toContain('"tenant": "tntsandbox1"');
    // The card join reads the saved card back (a mock card would answer card-not-found here).
    expect(event).toContain('"__typename": "CardEventCardSuccess"');
    expect(event).toContain('"state": "ENROLLED"');
    await page.screenshot({ path: '/tmp/cardgraph-graphiql-subscription.png' });

    // The headers pane (and so the token) stays out of the browser's storage.
    const stored = String(await page.evaluate('JSON.stringify(Object.entries(localStorage))'));
    expect(stored).toContain('graphiql:tabState');
    expect(stored).not.toMatch(/Bearer|eyJ/);
    expect(browser.blockedRequests).toEqual([]);
    expect(browser.pageErrors).toEqual([]);
  });

  it('shows a refused subscription’s error in the result pane, and the gateway logs the refusal', {
    timeout: 60_000,
  }, async () => {
    const { page } = browser;
    await openGraphiQL();
    const logMark = logLength();
    // Replace the headers pane with a token the gateway refuses, as a person pasting a bad one would.
    const headers = page.locator('.graphiql-editor-tool .graphiql-editor').last();
    await headers.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('{ "Authorization": "Bearer not-a-token" }');

    await run('LiveCardEvents');
    await expect.poll(() => resultText(), SHOWS_WITHIN).toContain('"code": "invalid-token"');
    expect(await resultText()).toContain('Invalid token: not a valid JWS');
    await page.screenshot({ path: '/tmp/cardgraph-graphiql-refused.png' });
    await expect
      .poll(() => logLinesAfter(logMark), SHOWS_WITHIN)
      .toContainEqual(
        expect.objectContaining({
          level: 30,
          msg: 'request refused: bad client token',
          code: 'invalid-token',
        }),
      );
    expect(browser.blockedRequests).toEqual([]);
  });
});
