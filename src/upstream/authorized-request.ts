import { UpstreamError } from './errors.ts';
import type { UpstreamCall, UpstreamHttp, UpstreamResponse } from './http.ts';
import type { AccessTokenProvider } from './oauth/access-token-provider.ts';

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
 * Sends `call` with `Authorization: Bearer <token of vault>` (spec, Authentication). On a 401 the
 * token is invalidated and the call is sent once more with a fresh token: a 401 means the upstream
 * did not act on the request, so even a creating POST may be repeated. A second 401 is thrown.
 * @throws UpstreamError as {@link UpstreamHttp.request} and {@link AccessTokenProvider.getToken}.
 */
export async function requestWithBearer<T>(
  deps: { http: UpstreamHttp; tokens: AccessTokenProvider },
  vault: string,
  call: UpstreamCall<T>,
): Promise<UpstreamResponse<T>> {
  const send = (token: string) =>
    deps.http.request({ ...call, headers: { ...call.headers, authorization: `Bearer ${token}` } });
  const token = await deps.tokens.getToken(vault);
  try {
    return await send(token);
  } catch (error) {
    if (!(error instanceof UpstreamError) || error.status !== 401) throw error;
    deps.tokens.invalidate(vault, token);
    return send(await deps.tokens.getToken(vault));
  }
}
