import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * Debian's chromium (installed by test/support/ensure-test-tools.sh) driven by playwright-core: no
 * browser download, a fresh profile per launch, and no request leaving the machine.
 */

/** Where the Debian package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Flags for a quiet, offline, container-friendly headless Chromium. */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A launched browser with one page and a record of what it tried to reach off the machine. */
export interface OfflineBrowser {
  context: BrowserContext;
  page: Page;
  /** Every request to a non-loopback address, each aborted before it left. */
  readonly blockedRequests: readonly string[];
  /** Console errors and uncaught page errors, for failure messages. */
  readonly pageErrors: readonly string[];
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Launches Chromium with a fresh user-data-dir, a 1400×900 viewport, and a route that aborts every
 * request whose host is not loopback (recorded in `blockedRequests`); `data:` and `blob:` URLs never
 * reach the network and are let through.
 */
export async function launchOfflineChromium(): Promise<OfflineBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'cardgraph-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1400, height: 900 },
  });
  const blockedRequests: string[] = [];
  const pageErrors: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (
      url.protocol === 'data:' ||
      url.protocol === 'blob:' ||
      LOOPBACK_HOSTS.has(url.host.replace(/:\d+$/, ''))
    ) {
      return route.continue();
    }
    blockedRequests.push(url.href);
    return route.abort('blockedbyclient');
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return {
    context,
    page,
    blockedRequests,
    pageErrors,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
