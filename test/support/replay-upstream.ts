import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCOPES } from '../../src/contracts/oauth.ts';

/**
 * A replay upstream: a local HTTP server (node:http, port 0) that answers exactly the provider's
 * documented examples (`shared/provider-docs/examples.json`, issue 19 item 5), by method and path,
 * with the documented statuses, and records every request it receives so a test can check what the
 * gateway sent. The gateway runs in front of it with `UPSTREAM=remote` ({@link ReplayUpstream.gatewayEnv}).
 */

/** One entry of examples.json, as the provider documentation shows it (facts only, see its README). */
export interface ProviderExample {
  /** `oauth`, `account-updater-v1`, `network-tokens`, `card-attributes`, `accounts`, `card-interface`, `webhooks`. */
  area: string;
  /** HTTP method, `WEBHOOK` for a notification shape, `N/A` for a documented fact that is no call. */
  method: string;
  /** Path below the area's base address (`{card_id}` stands for any card id), an absolute URL, or a label. */
  path: string;
  /** Documented HTTP status; null when the page does not show it. */
  status: number | null;
  request: unknown;
  /** Documented answer body; null when the page does not show it. */
  response: unknown;
  source_url: string;
  note: string;
}

/**
 * Where examples.json lives: `../shared/provider-docs/examples.json` from the repository root (CI has
 * `shared/` beside the clone). In a `git worktree` the root's sibling is the worktree's; the main
 * clone's sibling (found through the worktree's `.git` file) is tried next.
 * @throws Error naming the paths tried when none exists.
 */
export function providerExamplesPath(): string {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const relative = join('..', 'shared', 'provider-docs', 'examples.json');
  const tried = [resolve(root, relative)];
  const dotGit = join(root, '.git');
  if (existsSync(dotGit) && statSync(dotGit).isFile()) {
    // `gitdir: <main clone>/.git/worktrees/<name>`: the main clone is three levels up.
    const gitdir = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
    if (gitdir) {
      const absolute = isAbsolute(gitdir) ? gitdir : resolve(root, gitdir);
      tried.push(resolve(dirname(dirname(dirname(absolute))), relative));
    }
  }
  const found = tried.find((path) => existsSync(path));
  if (!found) throw new Error(`provider examples not found; tried ${tried.join(', ')}`);
  return found;
}

/** The documented examples, read from {@link providerExamplesPath} at call time, in file order. */
export function loadProviderExamples(): ProviderExample[] {
  return JSON.parse(readFileSync(providerExamplesPath(), 'utf8')) as ProviderExample[];
}

/**
 * Base path of each documented area on the replay server. Account updater v1 and network tokens share
 * one base address (`{account_updater_url}`, contract §1), as in the provider's deployment.
 */
export const REPLAY_AREA_BASES: Record<string, string> = {
  'account-updater-v1': '/account-updater',
  'network-tokens': '/account-updater',
  'card-interface': '/card-interface',
  'card-attributes': '/card-attributes',
  accounts: '/accounts',
};

/** Path of the token endpoint on the replay server. */
export const REPLAY_TOKEN_PATH = '/oauth/token';

/**
 * Media type of each area's answers. The examples do not show headers; these are the specification's
 * (JSON:API for the card interface and organization members, JSON otherwise).
 */
const AREA_MEDIA_TYPES: Record<string, string> = {
  'card-interface': 'application/vnd.api+json',
  accounts: 'application/vnd.api+json',
};

/** One request the replay server received. */
export interface ReplayRequest {
  method: string;
  /** Path below the server root, without the query, e.g. `/account-updater/cards`. */
  path: string;
  /** The query string without `?` (empty when none). */
  query: string;
  headers: IncomingHttpHeaders;
  /** Raw body text (empty when none). */
  body: string;
}

/** One route of the replay server: method, a path pattern below the server root, and its answer. */
interface Route {
  method: string;
  pattern: RegExp;
  /** The example answering it (the first documented one unless {@link ReplayUpstream.answerWith} chose another). */
  example: ProviderExample;
}

/** The client credentials the replay token endpoint accepts (and the gateway is configured with). */
export const REPLAY_CLIENT = { clientId: 'replay-client-id', clientSecret: 'replay-client-secret' } as const;

/**
 * The vault the replay gateway acts in: the tenant of the documented `network_token.updated`
 * notification, so the example is posted literally and still belongs to a configured vault.
 */
export const REPLAY_VAULT = 'tntt0fzksdr';

/** A started replay upstream. */
export interface ReplayUpstream {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every request received, in arrival order. */
  readonly requests: readonly ReplayRequest[];
  /** Requests received for `method` on `path` (below the server root). */
  requestsTo(method: string, path: string): ReplayRequest[];
  /** Makes `example` answer its route from now on (two documented examples share `GET /cards/{id}`). */
  answerWith(example: ProviderExample): void;
  /** Access tokens the token endpoint issued, in order. */
  readonly issuedTokens: readonly string[];
  /**
   * Environment of a gateway in front of this server (`startStack(env)`): `UPSTREAM=remote`, the four
   * base addresses and the token endpoint on this server, the credentials of {@link REPLAY_VAULT}.
   */
  gatewayEnv(): Record<string, string>;
  close(): Promise<void>;
}

/** A documented answer of the replay server: status, body (none when undefined) and media type. */
interface Answer {
  status: number;
  body?: unknown;
  contentType: string;
}

/**
 * The pseudo-example answering the card interface's `GET /cards/{card_id}`: the documented creation
 * answer (`examples`' card interface `POST /cards`) with status 200.
 * @throws Error when `examples` holds no card interface `POST /cards`.
 */
function cardInterfaceRead(examples: readonly ProviderExample[]): ProviderExample {
  const created = examples.find(
    (e) => e.area === 'card-interface' && e.method === 'POST' && e.path === '/cards',
  );
  if (!created) throw new Error('examples.json has no card interface POST /cards example');
  // Not documented: the card interface documents no card read (the gateway reads a card after an
  // unsubscription, and the gap decisions add `GET /cards/{card_id}`). The only documented card
  // record is the creation answer, so a read answers that record with 200.
  return { ...created, method: 'GET', path: '/cards/{card_id}', status: 200 };
}

/**
 * The answer of `example`. Where the example shows no status or no body, the comment of each case says
 * what is served instead (what sandbox contract §8, or where it is silent the specification, implies).
 */
function answerOf(example: ProviderExample): Answer {
  const contentType = AREA_MEDIA_TYPES[example.area] ?? 'application/json';
  if (example.area === 'card-interface' && example.path === '/cards/{card_id}/check') {
    // Documented status 200, body not shown: the specification's "Card updates" document (`data.type`
    // `card_updates`, `event` `updated`, `updated_values` with numbers, exp_year two digits), for the
    // card of the documented creation answer (expiry 04/28).
    return {
      status: 200,
      contentType,
      body: {
        data: {
          type: 'card_updates',
          attributes: {
            event: 'updated',
            updated_values: [{ field_name: 'exp_year', old_value: 28, new_value: 31 }],
          },
        },
      },
    };
  }
  if (
    example.area === 'card-interface' &&
    (example.path === '/cards' || example.path === '/cards/{card_id}')
  ) {
    // The stored copy of the creation answer ends inside `exp_month`; contract §8 says the attributes
    // hold the expiry, so the members shown are served with the expiry of the documented request
    // (04/28). Nothing else is added: what the page does not show is not served.
    const body = structuredClone(example.response) as { data: { attributes: Record<string, unknown> } };
    const request = example.request as { data: { attributes: { exp_month: number; exp_year: number } } };
    body.data.attributes.exp_month = request.data.attributes.exp_month;
    body.data.attributes.exp_year = request.data.attributes.exp_year;
    return { status: example.method === 'GET' ? 200 : (example.status ?? 201), contentType, body };
  }
  if (example.status === null) throw new Error(`no status for ${example.method} ${example.path}`);
  // A documented status with no body (204 of DELETE card-update-subscriptions) is served without one.
  return {
    status: example.status,
    contentType,
    ...(example.response === null ? {} : { body: example.response }),
  };
}

/** `{card_id}`-style placeholders match one path segment; everything else literally. */
function pathPattern(base: string, path: string): RegExp {
  const escaped = `${base}${path}`
    .split(/\{[^}]+\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`^${escaped}$`);
}

/** A contract §3 error body. */
function errorBody(status: number, code: string, detail: string): unknown {
  return { errors: [{ status: String(status), code, detail }] };
}

/** Client credentials of a token request: form fields, else HTTP Basic (contract §2 allows both). */
function clientCredentials(headers: IncomingHttpHeaders, form: URLSearchParams) {
  const basic = /^Basic\s+(.+)$/i.exec(headers.authorization ?? '')?.[1];
  if (basic) {
    const [id, secret] = Buffer.from(basic, 'base64').toString('utf8').split(':');
    const decode = (value = '') => decodeURIComponent(value.replace(/\+/g, ' '));
    return { clientId: decode(id), clientSecret: decode(secret) };
  }
  return { clientId: form.get('client_id') ?? '', clientSecret: form.get('client_secret') ?? '' };
}

/**
 * Starts the replay upstream on 127.0.0.1, port 0, serving `examples` (default: examples.json read now).
 *
 * - Each example with an HTTP method and a `/` path answers that method on `<area base><path>`, with
 *   its documented status and body; the first example of a route answers until
 *   {@link ReplayUpstream.answerWith} picks another.
 * - The token endpoint ({@link REPLAY_TOKEN_PATH}): the documented request is
 *   `client_id`, `client_secret`, `grant_type=client_credentials` as form fields; its answer is not
 *   shown, so it answers contract §2's `{"access_token","token_type":"Bearer","expires_in":1200,"scope"}`
 *   (`scope` the six scopes of §2) to {@link REPLAY_CLIENT} (form or Basic, so a test sees which the
 *   gateway used without every other call failing), `401 {"error":"invalid_client"}` otherwise.
 * - Every area call needs a bearer token this server issued (401 `unauthorized` otherwise, §3).
 * - Anything else answers 404 `not-found` (§3): nothing undocumented is made up.
 */
export async function startReplayUpstream(
  examples: readonly ProviderExample[] = loadProviderExamples(),
): Promise<ReplayUpstream> {
  const routes: Route[] = [];
  const addRoute = (example: ProviderExample) => {
    const base = REPLAY_AREA_BASES[example.area];
    if (!base || !example.path.startsWith('/')) return;
    const pattern = pathPattern(base, example.path);
    if (!routes.some((r) => r.method === example.method && r.pattern.source === pattern.source)) {
      routes.push({ method: example.method, pattern, example });
    }
  };
  for (const example of examples) addRoute(example);
  addRoute(cardInterfaceRead(examples));

  const requests: ReplayRequest[] = [];
  const issuedTokens: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const [path = '/', query = ''] = (req.url ?? '/').split('?', 2);
    const method = req.method ?? 'GET';
    requests.push({ method, path, query, headers: req.headers, body });
    const send = ({ status, body: answer, contentType }: Answer) => {
      if (answer === undefined) return void res.writeHead(status).end();
      res.writeHead(status, { 'content-type': contentType }).end(JSON.stringify(answer));
    };

    if (path === REPLAY_TOKEN_PATH && method === 'POST') {
      const form = new URLSearchParams(body);
      const { clientId, clientSecret } = clientCredentials(req.headers, form);
      if (
        form.get('grant_type') !== 'client_credentials' ||
        clientId !== REPLAY_CLIENT.clientId ||
        clientSecret !== REPLAY_CLIENT.clientSecret
      ) {
        return send({ status: 401, body: { error: 'invalid_client' }, contentType: 'application/json' });
      }
      const token = randomBytes(32).toString('base64url');
      issuedTokens.push(token);
      return send({
        status: 200,
        contentType: 'application/json',
        body: { access_token: token, token_type: 'Bearer', expires_in: 1200, scope: SCOPES.join(' ') },
      });
    }

    const route = routes.find((r) => r.method === method && r.pattern.test(path));
    const contentType = (route && AREA_MEDIA_TYPES[route.example.area]) ?? 'application/json';
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer || !issuedTokens.includes(bearer)) {
      return send({ status: 401, contentType, body: errorBody(401, 'unauthorized', 'missing or bad token') });
    }
    if (!route) {
      return send({
        status: 404,
        contentType,
        body: errorBody(404, 'not-found', `no documented example for ${method} ${path}`),
      });
    }
    send(answerOf(route.example));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    issuedTokens,
    requestsTo: (method, path) => requests.filter((r) => r.method === method && r.path === path),
    answerWith(example) {
      const base = REPLAY_AREA_BASES[example.area];
      const source = base && pathPattern(base, example.path).source;
      const route = routes.find((r) => r.method === example.method && r.pattern.source === source);
      if (!route) {
        throw new Error(`no route for ${example.method} ${example.path}`);
      }
      route.example = example;
    },
    gatewayEnv: () => ({
      UPSTREAM: 'remote',
      CARD_INTERFACE_URL: `${url}${REPLAY_AREA_BASES['card-interface']}`,
      ACCOUNT_UPDATER_URL: `${url}${REPLAY_AREA_BASES['account-updater-v1']}`,
      CARD_ATTRIBUTES_URL: `${url}${REPLAY_AREA_BASES['card-attributes']}`,
      ACCOUNTS_URL: `${url}${REPLAY_AREA_BASES.accounts}`,
      TOKEN_URL: `${url}${REPLAY_TOKEN_PATH}`,
      UPSTREAM_CREDENTIALS: `${REPLAY_VAULT}=${REPLAY_CLIENT.clientId}:${REPLAY_CLIENT.clientSecret}`,
    }),
    close: () =>
      new Promise<void>((done, fail) => {
        server.close((error) => (error ? fail(error) : done()));
        server.closeAllConnections();
      }),
  };
}
