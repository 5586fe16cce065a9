import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { type GraphiQLOptions, type Plugin, shouldRenderGraphiQL } from 'graphql-yoga';
import { issueDevToken } from '../auth/issue-dev-token.ts';
import { UPSTREAM_SCOPES } from '../auth/viewer.ts';
import { type Config, EMBEDDED_DEV_JWT_SECRET } from '../config/index.ts';
import type { Logger } from '../lib/logger.ts';

/**
 * GraphiQL served whole by the gateway: the page and every asset it loads (Yoga's GraphiQL bundle,
 * its style sheet, the Monaco editor workers, the favicon) come from the gateway itself, so GraphiQL
 * works on a machine without internet access, and its Content-Security-Policy forbids the browser any
 * other origin. The assets are those of `@graphql-yoga/render-graphiql` (the bundle Yoga itself would
 * load from a CDN), served as separate, immutable, gzip-able files instead of one 9 MB inline page.
 *
 * Subscriptions run over SSE (`Accept: text/event-stream`, POST): the headers pane's `Authorization`
 * reaches each subscription as it reaches a query, and a refused one answers with its error, which
 * GraphiQL shows in the result pane (graphql-ws would carry the headers pane nowhere, and GraphiQL's
 * graphql-ws client retries a 4403 close silently).
 */

/** Options of {@link useLocalGraphiQL}. */
export interface LocalGraphiQLOptions {
  /** The GraphQL endpoint the page is served on and talks to, e.g. `/graphql`. */
  endpoint: string;
  /**
   * The document the editor opens on (`src/client/operations.graphql`): called once, on the first
   * page served, and kept (like the bundle, nothing of GraphiQL is built before someone opens it).
   */
  defaultDocument: () => string;
  /**
   * The `Authorization` header value to prefill for a request from `remoteAddress` (the socket's
   * address, never a forwarded header), or undefined for none. See {@link developmentTokenIssuer}.
   */
  authorizationFor?: (remoteAddress: string | undefined) => Promise<string | undefined>;
  logger: Logger;
}

/** GraphiQL props the page passes to `YogaGraphiQL.renderYogaGraphiQL` (Yoga's options plus `query`). */
export type GraphiQLPageOptions = GraphiQLOptions & {
  /** The editor's document on first load (Yoga's GraphiQL otherwise opens on its welcome text). */
  query?: string;
};

/** Path under which the assets are served; versioned by their content, so cacheable for a year. */
export const GRAPHIQL_ASSET_PREFIX = '/graphiql-assets/';

/** One served file. */
interface Asset {
  type: string;
  body: Buffer;
  etag: string;
  /** gzip of `body`, computed on the first request that accepts it. */
  gzipped?: Promise<Buffer>;
}

const gzipAsync = promisify(gzip);

/**
 * Sets Monaco's worker addresses before the bundle loads. Same-origin worker files, so no `blob:` is
 * needed.
 */
const MONACO_ENVIRONMENT_JS = `(function () {
  var base = document.currentScript.src.replace(/[^/]*$/, '');
  var workers = { editorWorkerService: 'editor.worker.js', json: 'json.worker.js', graphql: 'graphql.worker.js' };
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (moduleId, label) {
      return base + workers[label];
    },
  };
})();
`;

/** Renders GraphiQL with the options the page carries as JSON (no inline script: CSP `script-src 'self'`). */
const RENDER_JS = `YogaGraphiQL.renderYogaGraphiQL(
  document.getElementById('root'),
  JSON.parse(document.getElementById('graphiql-options').textContent),
);
`;

/** Loads the bundle (9 MB of strings) only when GraphiQL is on; versioned by a hash of its contents. */
async function loadAssets(): Promise<{ base: string; files: Map<string, Asset> }> {
  const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
  const favicon = /^data:[^;]+;base64,(.*)$/s.exec(bundle.favicon);
  const sources: [string, string, string | Buffer][] = [
    ['monaco-environment.js', 'text/javascript; charset=utf-8', MONACO_ENVIRONMENT_JS],
    ['yoga-graphiql.js', 'text/javascript; charset=utf-8', bundle.js],
    ['render.js', 'text/javascript; charset=utf-8', RENDER_JS],
    ['graphiql.css', 'text/css; charset=utf-8', bundle.css],
    ['editor.worker.js', 'text/javascript; charset=utf-8', bundle.editorWorkerService],
    ['json.worker.js', 'text/javascript; charset=utf-8', bundle.jsonWorker],
    ['graphql.worker.js', 'text/javascript; charset=utf-8', bundle.graphqlWorker],
    ...(favicon
      ? [['favicon.ico', 'image/x-icon', Buffer.from(favicon[1]!, 'base64')] as [string, string, Buffer]]
      : []),
  ];
  const version = createHash('sha256');
  const files = new Map<string, Asset>();
  for (const [name, type, content] of sources) {
    const body = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    version.update(name).update(etag);
    files.set(name, { type, body, etag });
  }
  return { base: `${GRAPHIQL_ASSET_PREFIX}${version.digest('hex').slice(0, 12)}/`, files };
}

/**
 * The page's Content-Security-Policy: everything from the gateway itself. `'unsafe-inline'` styles
 * because React and Monaco set style attributes; `data:` images and fonts are GraphiQL's icons.
 */
const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** JSON safe inside a `<script>` element (no `</script>`, no HTML comment openers). */
function jsonForScriptElement(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** The HTML of the page: `options` as a JSON data block, every script and style from `base`. */
export function renderGraphiQLPage(options: GraphiQLPageOptions, base: string): string {
  const title = (options.title ?? 'GraphiQL').replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="referrer" content="no-referrer" />
    <title>${title}</title>
    <link rel="icon" href="${base}favicon.ico" />
    <link rel="stylesheet" href="${base}graphiql.css" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root"></div>
    <script type="application/json" id="graphiql-options">${jsonForScriptElement(options)}</script>
    <script src="${base}monaco-environment.js"></script>
    <script src="${base}yoga-graphiql.js"></script>
    <script src="${base}render.js"></script>
  </body>
</html>
`;
}

/**
 * Serves GraphiQL on `GET endpoint` (Accept: text/html) and its assets under
 * {@link GRAPHIQL_ASSET_PREFIX}. The page is never cached (it may hold a development token); the
 * assets are immutable. Used instead of Yoga's built-in GraphiQL (`graphiql: false`), which loads
 * its bundle from unpkg.com. The bundle is loaded and hashed on the first request for the page or
 * an asset, not at startup: it is 9 MB of strings that no GraphQL request needs (issue 21 item 2,
 * cold start); a failed load is retried by the next such request.
 */
export function useLocalGraphiQL(options: LocalGraphiQLOptions): Plugin {
  let loading: ReturnType<typeof loadAssets> | undefined;
  const assets = () => {
    loading ??= loadAssets().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
  let defaultDocument: string | undefined;
  return {
    async onRequest({ request, url, serverContext, fetchAPI, endResponse }) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      const isPage =
        (url.pathname === options.endpoint || url.pathname === `${options.endpoint}/`) &&
        shouldRenderGraphiQL(request);
      if (!isPage && !url.pathname.startsWith(GRAPHIQL_ASSET_PREFIX)) return;
      const { base, files } = await assets();
      if (url.pathname.startsWith(base)) {
        const asset = files.get(url.pathname.slice(base.length));
        if (!asset) {
          endResponse(new fetchAPI.Response('Not Found', { status: 404 }));
          return;
        }
        const headers: Record<string, string> = {
          'content-type': asset.type,
          'cache-control': 'public, max-age=31536000, immutable',
          etag: asset.etag,
          'x-content-type-options': 'nosniff',
          vary: 'accept-encoding',
        };
        if (request.headers.get('if-none-match') === asset.etag) {
          endResponse(new fetchAPI.Response(null, { status: 304, headers }));
          return;
        }
        let body = asset.body;
        if (/\bgzip\b/.test(request.headers.get('accept-encoding') ?? '') && asset.body.length > 1024) {
          asset.gzipped ??= gzipAsync(asset.body);
          body = await asset.gzipped;
          headers['content-encoding'] = 'gzip';
        }
        headers['content-length'] = String(body.length);
        endResponse(
          new fetchAPI.Response(request.method === 'HEAD' ? null : new Uint8Array(body), { headers }),
        );
        return;
      }
      if (isPage) {
        const remoteAddress = (serverContext as { req?: IncomingMessage }).req?.socket.remoteAddress;
        const authorization = await options.authorizationFor?.(remoteAddress);
        options.logger.debug(
          { remoteAddress, developmentToken: authorization !== undefined },
          'GraphiQL page served',
        );
        defaultDocument ??= options.defaultDocument();
        const page = renderGraphiQLPage(
          {
            title: 'cardgraph',
            endpoint: options.endpoint,
            query: defaultDocument,
            defaultQuery: defaultDocument,
            ...(authorization ? { headers: JSON.stringify({ Authorization: authorization }, null, 2) } : {}),
            // SSE carries the headers pane to subscriptions; POST keeps long documents out of URLs.
            subscriptionsProtocol: 'SSE',
            method: 'POST',
            // A token does not belong in the browser's localStorage.
            shouldPersistHeaders: false,
            defaultEditorToolsVisibility: 'headers',
          },
          base,
        );
        endResponse(
          new fetchAPI.Response(request.method === 'HEAD' ? null : page, {
            headers: {
              'content-type': 'text/html; charset=utf-8',
              'cache-control': 'no-store',
              'content-security-policy': PAGE_CSP,
              'x-content-type-options': 'nosniff',
              'referrer-policy': 'no-referrer',
            },
          }),
        );
      }
    },
  };
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * Whether `address` is a loopback address: 127.0.0.0/8, `::1`, or 127.0.0.0/8 mapped into IPv6
 * (`::ffff:127.0.0.1`, what a dual-stack socket reports for an IPv4 client).
 * @param address a socket's `remoteAddress`; undefined (socket already closed) is not loopback.
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const family = isIP(address);
  if (family === 4) return loopback.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    return mapped ? loopback.check(mapped[1]!, 'ipv4') : loopback.check(address, 'ipv6');
  }
  return false;
}

/**
 * Whether the gateway may put a development token in GraphiQL: only in development
 * (`NODE_ENV` not `production`), on the embedded sandbox, with the well-known development secret
 * (whoever can read it can sign such tokens anyway), and for a request whose socket comes from a
 * loopback address (never `X-Forwarded-For` or the like, which a client can write).
 */
export function mayEmbedDevelopmentToken(
  config: Pick<Config, 'environment' | 'upstream' | 'auth'>,
  remoteAddress: string | undefined,
): boolean {
  return (
    config.environment === 'development' &&
    config.upstream.mode === 'embedded' &&
    config.auth.jwtSecret === EMBEDDED_DEV_JWT_SECRET &&
    isLoopbackAddress(remoteAddress)
  );
}

/** Lifetime of a development token put in GraphiQL: a working day, in seconds. */
export const GRAPHIQL_DEV_TOKEN_LIFETIME_S = 8 * 3_600;

/**
 * {@link LocalGraphiQLOptions.authorizationFor} of `config`: a fresh development token (every scope,
 * vault `tntsandbox1`, {@link GRAPHIQL_DEV_TOKEN_LIFETIME_S}) when {@link mayEmbedDevelopmentToken}
 * allows it, none otherwise.
 */
export function developmentTokenIssuer(
  config: Pick<Config, 'environment' | 'upstream' | 'auth'>,
): (remoteAddress: string | undefined) => Promise<string | undefined> {
  return async (remoteAddress) => {
    if (!mayEmbedDevelopmentToken(config, remoteAddress)) return undefined;
    const token = await issueDevToken({
      secret: config.auth.jwtSecret!,
      subject: 'graphiql',
      vaults: ['tntsandbox1'],
      scopes: UPSTREAM_SCOPES,
      expiresInS: GRAPHIQL_DEV_TOKEN_LIFETIME_S,
    });
    return `Bearer ${token}`;
  };
}
