import { type UpstreamArea, UpstreamError } from './errors.ts';
import type { UpstreamCall, UpstreamHttp, UpstreamResponse } from './http.ts';
import type { AccessTokenProvider } from './oauth/access-token-provider.ts';
import { joinUrl } from './wire.ts';

/**
 * Constructor options of the upstream clients: `baseUrl` is the area's base address (contract §1),
 * `tokens` supplies bearer tokens per vault, `http` is the shared pooled client.
 */
export interface UpstreamClientOptions {
  baseUrl: string;
  tokens: AccessTokenProvider;
  http: UpstreamHttp;
}

/**
 * Sends `call` for `vault` with `Authorization: Bearer <token of vault>` (spec, Authentication),
 * through the vault's outbound forward proxy when its area uses one. On a 401 the
 * token is invalidated and the call is sent once more with a fresh token: a 401 means the upstream
 * did not act on the request, so even a creating POST may be repeated. A second 401 is thrown.
 * @throws UpstreamError as {@link UpstreamHttp.request} and {@link AccessTokenProvider.getToken}.
 */
export async function requestWithBearer<T>(
  deps: { http: UpstreamHttp; tokens: AccessTokenProvider },
  vault: string,
  call: UpstreamCall<T>,
): Promise<UpstreamResponse<T>> {
  // The vault also picks its outbound forward proxy, for the areas that go through one (src/upstream/http.ts).
  const send = (token: string) =>
    deps.http.request({ ...call, vault, headers: { ...call.headers, authorization: `Bearer ${token}` } });
  const token = await deps.tokens.getToken(vault);
  try {
    return await send(token);
  } catch (error) {
    if (!(error instanceof UpstreamError) || error.status !== 401) throw error;
    deps.tokens.invalidate(vault, token);
    return send(await deps.tokens.getToken(vault));
  }
}

/**
 * One call of an {@link AreaClient}: the path segments under the area's base address (each
 * percent-encoded by `joinUrl`) and an optional query string (`?…`) instead of a URL; area and
 * headers come from the client.
 */
export type AreaCall<T> = Omit<UpstreamCall<T>, 'area' | 'headers' | 'url'> & {
  path: readonly string[];
  query?: string;
  /** The id the call is about (card id, PAN alias, organization id), carried by its failure. */
  subject?: string;
  /** The body is the client's input: a failure naming a member of it is an input error. */
  sentInput?: boolean;
};

/**
 * The base of the upstream area clients: the area's base address (contract §1), its media type, and
 * {@link send}, which sends one call with the vault's bearer token (see {@link requestWithBearer}).
 */
export abstract class AreaClient {
  readonly #baseUrl: string;
  readonly #deps: { http: UpstreamHttp; tokens: AccessTokenProvider };
  readonly #area: UpstreamArea;
  readonly #mediaType: string;

  /** @param area names the area in errors, logs and metrics; `mediaType` is sent as `accept` (and `content-type` with a body). */
  protected constructor(area: UpstreamArea, mediaType: string, opts: UpstreamClientOptions) {
    this.#baseUrl = opts.baseUrl;
    this.#deps = { http: opts.http, tokens: opts.tokens };
    this.#area = area;
    this.#mediaType = mediaType;
  }

  /**
   * Sends `call` to `<baseUrl>/<path…><query>` in `vault`'s name and resolves to the answer's data
   * (the schema's output; undefined without a schema).
   * @throws UpstreamError as {@link requestWithBearer}.
   */
  protected async send<T>(vault: string, call: AreaCall<T>): Promise<T> {
    const { data } = await this.sendForAnswer(vault, call);
    return data;
  }

  /**
   * {@link send}, resolving to the whole answer: status, data and `Location` (for a client that
   * tells several success statuses apart, e.g. the card interface's 201 and 303).
   * @throws UpstreamError as {@link requestWithBearer}, carrying the call's `subject` and `sentInput`.
   */
  protected sendForAnswer<T>(
    vault: string,
    { path, query = '', subject, sentInput, ...call }: AreaCall<T>,
  ): Promise<UpstreamResponse<T>> {
    const type = this.#mediaType;
    return requestWithBearer(this.#deps, vault, {
      ...call,
      area: this.#area,
      url: `${joinUrl(this.#baseUrl, path)}${query}`,
      headers: call.body === undefined ? { accept: type } : { accept: type, 'content-type': type },
    }).catch((error: unknown) => {
      throw error instanceof UpstreamError ? error.about({ subject, sentInput }) : error;
    });
  }
}

/**
 * The base class of one area's client: an {@link AreaClient} of `area` and `mediaType`, constructed
 * from the {@link UpstreamClientOptions} alone.
 */
export function areaClient(area: UpstreamArea, mediaType: string) {
  abstract class OneAreaClient extends AreaClient {
    constructor(opts: UpstreamClientOptions) {
      super(area, mediaType, opts);
    }
  }
  return OneAreaClient;
}
