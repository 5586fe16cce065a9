import { randomUUID } from 'node:crypto';

/** Limits of graphql-sse's single-connection mode (src/config/: `websocket`, `sse`). */
export interface GraphQLSSELimits {
  /** Operations one stream may run at once (graphql-ws's `maxSubscriptionsPerSocket`). */
  maxOperationsPerStream: number;
  /** Time (ms) a reserved stream has to be opened by its GET before it is dropped (graphql-ws's `connectionInitTimeoutMs`). */
  reservationTimeoutMs: number;
  /** Reserved, unopened streams one client (token subject and vaults) may hold at once. */
  maxUnopenedStreamsPerClient: number;
}

/** An operation's place on its stream; the object tells a reused id's slot from the old one's. */
export interface Slot {
  /** graphql-sse has its result (it streams it until it completes or is stopped). */
  started: boolean;
}

/** One single-connection stream (a PUT's token), from the PUT until its GET stream ends or it expires. */
export interface Reservation {
  /** The stream's token: the server's, a random UUID. */
  readonly token: string;
  /** Who reserved it: the token subject and vaults of the `PUT`'s viewer. */
  readonly principal: string;
  /** Its GET has been accepted (no longer counts as unopened, no expiry). */
  opened: boolean;
  /**
   * It takes no more operations: its GET's token expired (its stream ends once its started operations
   * have completed) or its stream ended. Operations still starting on it end at once.
   */
  closed: boolean;
  /**
   * Running operations by operation id: every id graphql-sse holds on the stream, taken before
   * graphql-sse takes it and given back after graphql-sse has (see src/plugins/graphql-sse.ts).
   */
  readonly operations: Map<string, Slot>;
  /** Ends its started operations with a `token-expired` result (see `untilExpired`). */
  readonly expireOperations: Set<() => void>;
  /** Ends its opened GET stream through graphql-sse's own cleanup. */
  endStream?: () => void;
  expiry?: NodeJS.Timeout;
}

/**
 * The gateway's table of graphql-sse's single-connection streams: who reserved each, whether it is
 * open, its running operation ids and its expiry. graphql-sse keeps its own streams to itself; this
 * table is what the limits and the stream ownership are checked against (src/plugins/graphql-sse.ts).
 */
export class StreamReservations {
  /** Streams by token. */
  readonly #byToken = new Map<string, Reservation>();
  /** Unopened streams per principal. */
  readonly #unopened = new Map<string, number>();

  readonly #limits: GraphQLSSELimits;
  readonly #onTimeout: (reservation: Reservation) => void;

  /** @param onTimeout called with a stream not opened within `limits.reservationTimeoutMs`. */
  constructor(limits: GraphQLSSELimits, onTimeout: (reservation: Reservation) => void) {
    this.#limits = limits;
    this.#onTimeout = onTimeout;
  }

  /**
   * A new stream of `principal`, or undefined when it holds `maxUnopenedStreamsPerClient` unopened
   * ones already. Counted and taken in one synchronous step, so simultaneous PUTs cannot overrun the
   * cap.
   */
  reserve(principal: string): Reservation | undefined {
    if ((this.#unopened.get(principal) ?? 0) >= this.#limits.maxUnopenedStreamsPerClient) return undefined;
    const reservation: Reservation = {
      token: randomUUID(),
      principal,
      opened: false,
      closed: false,
      operations: new Map(),
      expireOperations: new Set(),
    };
    reservation.expiry = setTimeout(
      () => this.#onTimeout(reservation),
      this.#limits.reservationTimeoutMs,
    ).unref();
    this.#byToken.set(reservation.token, reservation);
    this.#countUnopened(principal, 1);
    return reservation;
  }

  /** The stream of this token when `principal` reserved it (an unknown, closed or another's is undefined). */
  find(token: string | null, principal: string): Reservation | undefined {
    const reservation = token === null ? undefined : this.#byToken.get(token);
    return reservation?.principal === principal ? reservation : undefined;
  }

  /** Its GET has been accepted: it no longer counts as unopened, and no longer times out. */
  open(reservation: Reservation): void {
    if (reservation.opened) return;
    reservation.opened = true;
    clearTimeout(reservation.expiry);
    this.#countUnopened(reservation.principal, -1);
  }

  /**
   * Takes operation `id`'s slot on the stream, or says why not: the id runs already (`in-use`), or
   * the stream runs `maxOperationsPerStream` operations (`full`). Checked and taken in one
   * synchronous step, so simultaneous POSTs on one stream cannot overrun the cap.
   */
  take(reservation: Reservation, id: string): Slot | 'in-use' | 'full' {
    if (reservation.operations.has(id)) return 'in-use';
    if (reservation.operations.size >= this.#limits.maxOperationsPerStream) return 'full';
    const slot: Slot = { started: false };
    reservation.operations.set(id, slot);
    return slot;
  }

  /** Gives operation `id` back to its stream (with `slot`: only while it is still that operation's). */
  free(reservation: Reservation, id: string, slot?: Slot): void {
    if (slot && reservation.operations.get(id) !== slot) return;
    reservation.operations.delete(id);
    this.#endWhenIdle(reservation);
  }

  /** Forgets a stream (idempotent); its graphql-sse stream is gone or going. */
  release(reservation: Reservation): void {
    this.#close(reservation);
    this.open(reservation);
    reservation.operations.clear();
    reservation.expireOperations.clear();
    reservation.endStream = undefined;
  }

  /**
   * The token the opening GET was opened with expired: the stream takes no more requests, its
   * started operations end with a `token-expired` result, then (their `complete` written) the stream
   * ends.
   */
  expire(reservation: Reservation): void {
    if (reservation.closed) return;
    this.#close(reservation);
    const expire = [...reservation.expireOperations];
    reservation.expireOperations.clear();
    for (const end of expire) end();
    this.#endWhenIdle(reservation);
  }

  /** `untilExpired`'s watch of an operation on `reservation`: it ends with the stream's token. */
  watchExpiry(reservation: Reservation): (expire: () => void) => () => void {
    return (expire) => {
      if (reservation.closed) {
        expire();
        return () => {};
      }
      reservation.expireOperations.add(expire);
      return () => reservation.expireOperations.delete(expire);
    };
  }

  /** Takes a stream out of use (idempotent): requests naming it get 404 from now on. */
  #close(reservation: Reservation): void {
    reservation.closed = true;
    if (this.#byToken.get(reservation.token) === reservation) this.#byToken.delete(reservation.token);
  }

  /** Ends an expired stream once none of its operations is still being written. */
  #endWhenIdle(reservation: Reservation): void {
    if (!reservation.closed || [...reservation.operations.values()].some((slot) => slot.started)) return;
    const endStream = reservation.endStream;
    reservation.endStream = undefined;
    endStream?.();
  }

  #countUnopened(principal: string, delta: number): void {
    const count = (this.#unopened.get(principal) ?? 0) + delta;
    if (count > 0) this.#unopened.set(principal, count);
    else this.#unopened.delete(principal);
  }
}
