import { z } from 'zod';
import {
  authenticate,
  httpError,
  JSON_MEDIA_TYPE,
  type Router,
  readValidJsonBody,
  sendJson,
  sendNoContent,
  type TokenResolver,
} from './http.ts';
import { isoUtc, randomBase62 } from './ids.ts';
import type { WebhookDispatcher, WebhookEndpoint } from './webhooks.ts';

/**
 * Sandbox-only HTTP API of the webhook endpoint registry (the provider configures endpoints in its
 * dashboard, spec "Events", setup step 2; the sandbox offers this API instead). Per vault: the vault is
 * the one of the bearer token. Shapes and rules in docs/gap-decisions.md, "Webhook endpoint registry".
 */

/** Collection path of the registry. */
export const WEBHOOK_ENDPOINTS_PATH = '/sandbox/webhook-endpoints';
/** Delivery log path: every vault without a token (admin view), the token's vault with one. */
export const WEBHOOK_DELIVERIES_PATH = '/sandbox/webhook-deliveries';

/** A secret given by the client: 16 to 256 visible ASCII characters (no spaces). */
const SECRET_PATTERN = /^[\x21-\x7E]{16,256}$/;
/** Longest accepted `url`, in characters. */
const MAX_URL_LENGTH = 2048;

const createEndpointSchema = z.object({
  url: z
    .string()
    .max(MAX_URL_LENGTH)
    .refine((value) => {
      try {
        const url = new URL(value);
        return (
          (url.protocol === 'http:' || url.protocol === 'https:') &&
          url.username === '' &&
          url.password === '' &&
          !url.hash
        );
      } catch {
        return false;
      }
    }, 'must be an absolute http or https URL without credentials or fragment'),
  secret: z
    .string()
    .regex(SECRET_PATTERN, 'must be 16 to 256 visible ASCII characters without spaces')
    .optional(),
});

/** A generated signing secret: `whsec_` + 32 Base62 characters (38 characters, about 190 bits). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBase62(32)}`;
}

/** Public view of an endpoint: never the secret. */
function endpointResource(endpoint: WebhookEndpoint) {
  return { id: endpoint.id, url: endpoint.url, createdAt: isoUtc(endpoint.createdAtMs) };
}

/** Dependencies of {@link registerWebhookEndpointRoutes}. */
export interface WebhookEndpointDeps {
  dispatcher: WebhookDispatcher;
  /** Token lookup for the delivery log's optional authentication. */
  resolveToken: TokenResolver;
}

/**
 * Registers (all `application/json`, bodies `{"data": …}`, camelCase like the delivery log):
 * - `POST /sandbox/webhook-endpoints` (`cards:write`), body `{url, secret?}`: 201
 *   `{data: {id, url, createdAt, secret}}` with `Location`; the secret (generated when absent) is
 *   returned only here. 400 `bad-request` (pointer `/url` or `/secret`), 409 `conflict` when the vault
 *   already has an endpoint with this URL, 413, 415.
 * - `GET /sandbox/webhook-endpoints` (`cards:read`): 200 `{data: [{id, url, createdAt}]}`.
 * - `GET /sandbox/webhook-endpoints/{endpointId}` (`cards:read`): 200 `{data: {id, url, createdAt}}`.
 * - `DELETE /sandbox/webhook-endpoints/{endpointId}` (`cards:write`): 204; pending retries to it end
 *   as `failed` (`endpoint-removed`).
 * - `GET /sandbox/webhook-endpoints/{endpointId}/deliveries` (`cards:read`): 200 `{data: DeliveryRecord[]}`.
 * - `GET /sandbox/webhook-deliveries`: without `Authorization`, every vault's attempts (admin view);
 *   with a bearer token (`cards:read`), the token's vault only (401/403 as elsewhere).
 * An endpoint id unknown in the token's vault answers 404 `webhook-endpoint-not-found`.
 */
export function registerWebhookEndpointRoutes(router: Router, deps: WebhookEndpointDeps): void {
  const { dispatcher } = deps;
  const endpointOr404 = (vault: string, id: string): WebhookEndpoint => {
    const endpoint = dispatcher.endpoints(vault).find((candidate) => candidate.id === id);
    if (!endpoint) {
      throw httpError(404, 'webhook-endpoint-not-found', 'no webhook endpoint with this id in the vault');
    }
    return endpoint;
  };

  router.add('POST', WEBHOOK_ENDPOINTS_PATH, 'cards:write', async ({ req, res, auth }) => {
    const request = await readValidJsonBody(req, JSON_MEDIA_TYPE, createEndpointSchema);
    const url = new URL(request.url).href;
    if (dispatcher.endpoints(auth.vault).some((endpoint) => endpoint.url === url)) {
      throw httpError(409, 'conflict', 'an endpoint with this url is already registered in the vault', {
        pointer: '/url',
      });
    }
    const secret = request.secret ?? generateWebhookSecret();
    const { id } = dispatcher.register(auth.vault, { url, secret });
    const endpoint = endpointOr404(auth.vault, id);
    sendJson(res, 201, { data: { ...endpointResource(endpoint), secret } }, JSON_MEDIA_TYPE, {
      location: `${WEBHOOK_ENDPOINTS_PATH}/${id}`,
    });
  });

  router.add('GET', WEBHOOK_ENDPOINTS_PATH, 'cards:read', ({ res, auth }) => {
    sendJson(res, 200, { data: dispatcher.endpoints(auth.vault).map(endpointResource) }, JSON_MEDIA_TYPE);
  });

  router.add('GET', `${WEBHOOK_ENDPOINTS_PATH}/:endpointId`, 'cards:read', ({ res, auth, params }) => {
    const endpoint = endpointOr404(auth.vault, params.endpointId!);
    sendJson(res, 200, { data: endpointResource(endpoint) }, JSON_MEDIA_TYPE);
  });

  router.add(
    'DELETE',
    `${WEBHOOK_ENDPOINTS_PATH}/:endpointId`,
    'cards:write',
    ({ req, res, auth, params }) => {
      req.resume();
      if (!dispatcher.remove(auth.vault, params.endpointId!)) endpointOr404(auth.vault, params.endpointId!);
      sendNoContent(res);
    },
  );

  router.add(
    'GET',
    `${WEBHOOK_ENDPOINTS_PATH}/:endpointId/deliveries`,
    'cards:read',
    ({ res, auth, params }) => {
      const endpoint = endpointOr404(auth.vault, params.endpointId!);
      const data = dispatcher.deliveries(auth.vault).filter((record) => record.endpointId === endpoint.id);
      sendJson(res, 200, { data }, JSON_MEDIA_TYPE);
    },
  );

  router.addPublic('GET', WEBHOOK_DELIVERIES_PATH, ({ req, res, log }) => {
    if (req.headers.authorization === undefined) {
      sendJson(res, 200, { data: dispatcher.deliveries() }, JSON_MEDIA_TYPE);
      return;
    }
    const auth = authenticate(req, deps.resolveToken, 'cards:read');
    log.vault = auth.vault;
    sendJson(res, 200, { data: dispatcher.deliveries(auth.vault) }, JSON_MEDIA_TYPE);
  });
}
