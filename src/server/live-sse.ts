import type { ServerResponse } from 'node:http';
import type { Logger } from '../lib/logger.ts';
import type { LiveEvent, LiveSubscription } from '../live/hub.ts';

/** Keep-alive comment interval of every open live SSE stream (ms): Yoga's SSE ping interval. */
const PING_INTERVAL_MS = 12_000;
const PING = ':\n\n';
const COMPLETE = 'event: complete\ndata:\n\n';

/** Yoga's SSE response headers (its `getSSEProcessor`), word for word. */
export const YOGA_SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  Connection: 'keep-alive',
  'Cache-Control': 'no-cache',
  'Content-Encoding': 'none',
} as const;

/**
 * graphql-sse's distinct-connections response headers (its handler's, word for word): its events are
 * Yoga's (`event: next` with the result, `event: complete` with empty data), only the type differs.
 */
export const GRAPHQL_SSE_HEADERS = {
  connection: 'keep-alive',
  'cache-control': 'no-cache',
  'content-encoding': 'none',
  'content-type': 'text/event-stream; charset=utf-8',
} as const;

/**
 * The SSE framing of live members (src/live/hub.ts) on Node responses: Yoga's SSE on `/graphql` and
 * graphql-sse's distinct-connections mode on `/graphql/stream` write the same events. Only framing
 * and back-pressure live here:
 * - each event is `event: next\ndata: <json>\n\n`, encoded once per {@link LiveEvent} however many
 *   streams write it, and written with the public `res.write`;
 * - `event: complete` when the member ends (execution done, token expired), a cut connection when it
 *   fails or its client reads too slowly (more than `maxBufferedBytes` unsent, as graphql-ws closes
 *   such a socket);
 * - one keep-alive timer for every open stream (a `:` comment every 12 s), not one per stream.
 */
export class LiveSseStreams {
  readonly #open = new Set<ServerResponse>();
  readonly #frames = new WeakMap<LiveEvent, Buffer>();
  readonly #logger: Logger;
  readonly #maxBufferedBytes: number;
  #ping: NodeJS.Timeout | undefined;
  #encoded = 0;

  /** @param options.maxBufferedBytes unsent bytes a stream may hold before it is cut. */
  constructor(options: { logger: Logger; maxBufferedBytes: number }) {
    this.#logger = options.logger;
    this.#maxBufferedBytes = options.maxBufferedBytes;
  }

  /** `event: next` frames built so far: one per event however many streams write it (diagnostics and tests). */
  get eventsEncoded(): number {
    return this.#encoded;
  }

  /** Streams open (diagnostics and tests). */
  get streams(): number {
    return this.#open.size;
  }

  /**
   * Writes `subscription` to `res` until it ends (`complete`), its client goes away or reads too
   * slowly (cut).
   * @param headers Yoga's SSE headers (`/graphql`) or graphql-sse's ({@link GRAPHQL_SSE_HEADERS}).
   */
  serve(
    res: ServerResponse,
    subscription: LiveSubscription,
    headers: Readonly<Record<string, string>>,
    requestId?: string,
  ): void {
    res.writeHead(200, headers);
    // As Yoga: some browsers show nothing until the first bytes.
    res.write(PING);
    let ended = false;
    const end = (last?: string) => {
      if (ended) return;
      ended = true;
      this.#open.delete(res);
      if (this.#open.size === 0) this.#stopPing();
      if (last !== undefined && !res.destroyed) res.end(last);
      else res.destroy();
    };
    res.once('close', () => {
      subscription.close();
      end();
    });
    this.#open.add(res);
    this.#ping ??= setInterval(() => {
      for (const open of this.#open) if (!open.destroyed) open.write(PING);
    }, PING_INTERVAL_MS).unref();
    subscription.attach({
      next: (event) => {
        if (res.destroyed) return;
        if (res.writableLength > this.#maxBufferedBytes) {
          this.#logger.warn(
            { bufferedBytes: res.writableLength, reqId: requestId },
            'SSE slow consumer cut: too much unsent data',
          );
          subscription.close();
          end();
          return;
        }
        res.write(this.#frame(event));
      },
      end: (failure) => end(failure === undefined ? COMPLETE : undefined),
    });
  }

  #stopPing(): void {
    clearInterval(this.#ping);
    this.#ping = undefined;
  }

  /** `event: next` of an event, UTF-8 encoded once however many streams write it. */
  #frame(event: LiveEvent): Buffer {
    let frame = this.#frames.get(event);
    if (frame === undefined) {
      frame = Buffer.from(`event: next\ndata: ${event.json}\n\n`);
      this.#encoded++;
      this.#frames.set(event, frame);
    }
    return frame;
  }
}
