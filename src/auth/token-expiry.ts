import { GraphQLError } from 'graphql';

/**
 * Token lifetime on long-lived transports: a subscription or a streamed response lives at most until
 * the client token's `exp`. graphql-ws closes its socket with 4403 (src/server/graphql-ws.ts); HTTP streams (SSE,
 * multipart, graphql-sse) end with a `token-expired` error result (src/plugins/token-expiry.ts), and a
 * graphql-sse single-connection stream ends at the `exp` of the token its `GET` was opened with, its
 * operations with that result (src/plugins/graphql-sse.ts). All use the timer below so they end at the
 * same instant.
 */

/** Longest delay setTimeout honours (2^31 - 1 ms, about 24.8 days); Node clamps longer ones to 1 ms. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** Code of the error that ends a stream at token expiry. */
export const TOKEN_EXPIRED_CODE = 'token-expired';

/** One registration of {@link onTokenExpiry}. */
interface Expiry {
  onExpired: () => void;
}

/**
 * Every pending token expiry of the process (issue 21: nothing per subscriber that one timer for
 * all does): registrations by their instant (ms since the epoch; tokens expire on whole seconds, so
 * they share instants), the instants in a min-heap (an instant whose registrations were all
 * cancelled stays there until its time, at most one per second of the longest token lifetime), and
 * one timer for the earliest instant.
 */
const expiries = new Map<number, Set<Expiry>>();
const instants: number[] = [];
let timer: NodeJS.Timeout | undefined;
let timerAt = Number.POSITIVE_INFINITY;

function pushInstant(at: number): void {
  let i = instants.push(at) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (instants[parent]! <= at) break;
    instants[i] = instants[parent]!;
    i = parent;
  }
  instants[i] = at;
}

function popInstant(): void {
  const last = instants.pop()!;
  if (instants.length === 0) return;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= instants.length) break;
    const right = left + 1;
    const child = right < instants.length && instants[right]! < instants[left]! ? right : left;
    if (instants[child]! >= last) break;
    instants[i] = instants[child]!;
    i = child;
  }
  instants[i] = last;
}

/** Sets the one timer for the earliest instant that still has registrations (none when none has). */
function arm(): void {
  while (instants.length > 0 && !expiries.has(instants[0]!)) popInstant();
  const next = instants[0];
  if (next === timerAt) return;
  clearTimeout(timer);
  timer = undefined;
  timerAt = Number.POSITIVE_INFINITY;
  if (next === undefined) return;
  timerAt = next;
  // Beyond setTimeout's range the wait is taken in steps (arm again when the step ends).
  timer = setTimeout(fire, Math.min(Math.max(0, next - Date.now()), MAX_TIMER_DELAY_MS));
}

/** Runs every registration whose instant has come, then arms the timer for the next. */
function fire(): void {
  timer = undefined;
  timerAt = Number.POSITIVE_INFINITY;
  const now = Date.now();
  const due: Set<Expiry>[] = [];
  while (instants.length > 0 && instants[0]! <= now) {
    const at = instants[0]!;
    popInstant();
    const registered = expiries.get(at);
    if (!registered) continue;
    expiries.delete(at);
    due.push(registered);
  }
  arm();
  for (const registered of due) {
    for (const expiry of [...registered]) {
      // Cancelled by an earlier callback of this round: skipped.
      if (!registered.delete(expiry)) continue;
      try {
        expiry.onExpired();
      } catch (error) {
        // As a throwing timer callback would, without keeping the others from running.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

/**
 * Calls `onExpired` once, when `Date.now()` reaches `expiresAtMs` (at once, synchronously, when it
 * already has). One timer serves every pending expiry of the process; expiries beyond setTimeout's
 * range are waited for in steps.
 * @param expiresAtMs the token's `exp` in ms since the epoch (Viewer `expiresAt`).
 * @returns a function that cancels the call (idempotent).
 */
export function onTokenExpiry(expiresAtMs: number, onExpired: () => void): () => void {
  if (expiresAtMs - Date.now() <= 0) {
    onExpired();
    return () => {};
  }
  const expiry: Expiry = { onExpired };
  let registered = expiries.get(expiresAtMs);
  if (!registered) {
    registered = new Set();
    expiries.set(expiresAtMs, registered);
    pushInstant(expiresAtMs);
  }
  registered.add(expiry);
  if (expiresAtMs < timerAt) arm();
  const at = expiresAtMs;
  const set = registered;
  return () => {
    if (!set.delete(expiry) || set.size > 0 || expiries.get(at) !== set) return;
    expiries.delete(at);
    // The timer follows: the next instant, or none.
    if (at === timerAt) arm();
  };
}

/** The error result that ends an HTTP stream at token expiry: code `token-expired`. */
export function tokenExpiredError(): GraphQLError {
  return new GraphQLError('The client token has expired: subscribe again with a fresh token', {
    extensions: { code: TOKEN_EXPIRED_CODE },
  });
}

/**
 * Ends `source` at `expiresAtMs`: results pass through until then; at expiry the source is returned
 * (its producer stops: no more events, no more upstream reads), one last `expiredResult()` is yielded
 * (also when the consumer is waiting for the next result) and the stream completes.
 * `return()` of the wrapper cancels the timer and returns the source.
 * @param source an async stream of results (a subscription's execution results).
 * @param expiresAtMs the token's `exp` in ms since the epoch.
 */
export function untilTokenExpiry<R>(
  source: AsyncIterable<R>,
  expiresAtMs: number,
  expiredResult: () => R,
): AsyncIterableIterator<R> {
  return untilExpired(source, (expire) => onTokenExpiry(expiresAtMs, expire), expiredResult);
}

/**
 * {@link untilTokenExpiry} with the moment of expiry given by the caller: `watchExpiry(expire)` is
 * called once, at once, and arranges for `expire` to be called when the stream must end (it may call
 * it synchronously when that moment has passed); it returns a function that cancels that
 * arrangement, called once the stream completes, fails or is returned (so nothing outlives it).
 * @param source an async stream of results (a subscription's execution results).
 */
export function untilExpired<R>(
  source: AsyncIterable<R>,
  watchExpiry: (expire: () => void) => () => void,
  expiredResult: () => R,
): AsyncIterableIterator<R> {
  const iterator = source[Symbol.asyncIterator]();
  let state: 'open' | 'expired' | 'closed' = 'open';
  /** Resolves the consumer's pending `next()`, if any. */
  let pending: ((result: IteratorResult<R, undefined>) => void) | undefined;
  const stopSource = () => {
    void Promise.resolve(iterator.return?.()).catch(() => {});
  };
  const cancel = watchExpiry(() => {
    if (state !== 'open') return;
    stopSource();
    if (pending) {
      const resolve = pending;
      pending = undefined;
      state = 'closed';
      resolve({ done: false, value: expiredResult() });
    } else {
      state = 'expired';
    }
  });
  const done = (): IteratorResult<R, undefined> => ({ done: true, value: undefined });
  return {
    next() {
      if (state === 'closed') return Promise.resolve(done());
      if (state === 'expired') {
        state = 'closed';
        return Promise.resolve({ done: false, value: expiredResult() });
      }
      return new Promise((resolve, reject) => {
        pending = resolve;
        iterator.next().then(
          (result) => {
            if (pending !== resolve) return;
            pending = undefined;
            if (result.done) {
              state = 'closed';
              cancel();
              resolve(done());
            } else {
              resolve(result);
            }
          },
          (error: unknown) => {
            if (pending !== resolve) return;
            pending = undefined;
            state = 'closed';
            cancel();
            reject(error);
          },
        );
      });
    },
    async return() {
      const wasOpen = state === 'open';
      state = 'closed';
      cancel();
      if (pending) {
        const resolve = pending;
        pending = undefined;
        resolve(done());
      }
      if (wasOpen) await iterator.return?.();
      return done();
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
