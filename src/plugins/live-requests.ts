import { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Viewer } from '../auth/viewer.ts';
import type { ViewerAuth } from './viewer-auth.ts';

/**
 * The server-context members this plugin reads and writes: those of the live-subscription hub's
 * `LiveServerContext` (src/live/hub.ts, a layer above: described here, not imported) and the token
 * refusal {@link useViewerAuth} answers with.
 */
interface LiveRequestContext {
  viewer?: Viewer | null;
  viewerRefusal?: GraphQLError;
  live?: { endsAtTokenExpiry: boolean; iterable?: boolean };
}

/**
 * Sends the live subscriptions of Yoga's own request handling to the live-subscription hub
 * (src/live/hub.ts), so they share its executions as those of every other transport do: an
 * operation that may be a subscription (its text says `subscription`), sent over HTTP by a client
 * that accepts SSE (Yoga's reading of `Accept`: `text/event-stream`, `text/*`, `*\/*` or none) and
 * whose server context no transport marked, gets its viewer resolved here and its server context
 * marked `live` with `iterable` (the hub answers with an async iterable Yoga frames) and
 * `endsAtTokenExpiry` (the stream ends at the token's `exp` with a `token-expired` result). That is
 * Yoga's SSE on `/graphql` when the lean path is off (`GRAPHQL_LEAN_HTTP=off`) and the lean path's
 * streaming answers outside its own SSE road.
 *
 * The token is checked once: the viewer goes into the server context, which viewer auth takes as
 * the transport's ({@link useViewerAuth}); a refused token is kept there and answered by viewer auth
 * as ever (401 with its code). Register it after the plugins that rewrite parameters (persisted
 * operations) and before the hub's plugin, which reads the mark in its own `onParams`.
 *
 * A subscription Yoga answers 406 (its `Accept` takes no stream) is stopped at once rather than
 * left running without a reader.
 */
export function useLiveRequests(auth: ViewerAuth): Plugin {
  /** Resolves the request's viewer (unless the transport did) and marks the subscription live. */
  async function markLive(server: LiveRequestContext, request: Request): Promise<void> {
    if (server.viewer === undefined) {
      try {
        server.viewer = await auth.fromHeader(request.headers.get('authorization'));
      } catch (error) {
        if (!(error instanceof GraphQLError)) throw error;
        server.viewerRefusal = error;
        return;
      }
    }
    if (server.viewer) server.live = { endsAtTokenExpiry: true, iterable: true };
  }
  return {
    // Synchronous for every request it leaves alone (queries, mutations): no promise per request.
    onParams({ params, request, context }) {
      const server = context as LiveRequestContext;
      if (server.live || server.viewerRefusal || !request) return;
      if (typeof params.query !== 'string' || !params.query.includes('subscription')) return;
      if (!acceptsEventStream(request.headers.get('accept'))) return;
      return markLive(server, request);
    },
    // A subscription no result processor takes (`Accept` JSON only): Yoga answers 406 and would
    // leave its stream running with no reader (a bus subscription and a live-gauge count for the
    // life of the process). Registered after the plugins that wrap the stream, so `return` reaches
    // it through them.
    onResultProcess({ result, resultProcessor }) {
      if (resultProcessor || !isAsyncIterable(result)) return;
      const stream = result as Partial<AsyncIterator<unknown>>;
      void Promise.resolve(stream.return?.()).catch(() => undefined);
    },
  };
}

/**
 * Whether Yoga's result processing would answer a subscription of a request with this `Accept` with
 * SSE: one of its media types (each read as Yoga reads them, a charset other than UTF-8 skipped)
 * matches `text/event-stream`; no header reads as `*\/*`.
 */
export function acceptsEventStream(accept: string | null): boolean {
  for (const part of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType, ...parameters] = part.split(';');
    const charset = parameters.find((parameter) => parameter.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') continue;
    const [type, subtype] = (mediaType ?? '').split('/');
    if ((type === '*' || type === 'text') && (subtype === '*' || subtype === 'event-stream')) return true;
  }
  return false;
}
