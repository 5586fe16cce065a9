import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../support/fixtures.ts';

/**
 * GraphiQL's page and assets over HTTP: every script, style, worker and icon the page names is served
 * by the gateway from its own origin, cacheable and compressible, and nothing when GraphiQL is off.
 */

let stack: Stack;
let off: Stack;
beforeAll(async () => {
  [stack, off] = await Promise.all([startStack(), startStack({ GRAPHIQL: 'off' })]);
});
afterAll(async () => {
  await Promise.all([stack?.stop(), off?.stop()]);
});

/** The page's HTML as a browser asks for it. */
async function page(url: string): Promise<{ status: number; html: string }> {
  const response = await request(`${url}/graphql`, { headers: { accept: 'text/html' } });
  return { status: response.statusCode, html: await response.body.text() };
}

describe('GraphiQL assets', () => {
  it('names only same-origin assets, each served with a long cache life', async () => {
    const { html } = await page(stack.url);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(assets.map((asset) => asset.replace(/^\/graphiql-assets\/[0-9a-f]{12}\//, ''))).toEqual([
      'favicon.ico',
      'graphiql.css',
      'monaco-environment.js',
      'yoga-graphiql.js',
      'render.js',
    ]);
    for (const asset of assets) {
      const response = await request(`${stack.url}${asset}`);
      expect(response.statusCode, asset).toBe(200);
      expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      await response.body.dump();
    }
  });

  it('serves the Monaco workers next to the bundle, gzipped on request, 304 for a known ETag', async () => {
    const { html } = await page(stack.url);
    const base = /src="(\/graphiql-assets\/[0-9a-f]{12}\/)monaco-environment\.js"/.exec(html)![1]!;
    for (const worker of ['editor.worker.js', 'json.worker.js', 'graphql.worker.js']) {
      const plain = await request(`${stack.url}${base}${worker}`);
      expect(plain.statusCode).toBe(200);
      expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
      const body = Buffer.from(await plain.body.arrayBuffer());
      const zipped = await request(`${stack.url}${base}${worker}`, {
        headers: { 'accept-encoding': 'gzip' },
      });
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(Buffer.from(await zipped.body.arrayBuffer())).equals(body)).toBe(true);
      const cached = await request(`${stack.url}${base}${worker}`, {
        headers: { 'if-none-match': String(plain.headers.etag) },
      });
      expect(cached.statusCode).toBe(304);
      await cached.body.dump();
    }
    const missing = await request(`${stack.url}${base}nothing.js`);
    expect(missing.statusCode).toBe(404);
    await missing.body.dump();
  });

  it('serves neither page nor assets with GRAPHIQL=off', async () => {
    const { html } = await page(stack.url);
    const asset = /src="(\/graphiql-assets\/[^"]+\/yoga-graphiql\.js)"/.exec(html)![1]!;
    const refused = await page(off.url);
    expect(refused.status).toBe(406);
    const response = await request(`${off.url}${asset}`);
    expect(response.statusCode).toBe(404);
    await response.body.dump();
  });
});
