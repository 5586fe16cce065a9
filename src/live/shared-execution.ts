import {
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  getOperationAST,
  Kind,
  visit,
} from 'graphql';
import { SlowSubscriberError } from '../events/card-event-bus.ts';
import { usesIncrementalDelivery } from '../lib/incremental-delivery.ts';

/**
 * Shared live-subscription executions of the hub (src/live/hub.ts), whatever transport each member
 * came by (issue 13 "Fan-out": a smaller per-subscriber footprint). Subscribers whose operations are
 * identical (same document text, operation name and variables) and whose viewers may see the same
 * things (same vaults and scopes) share one execution:
 * one enveloped `subscribe` (its context, plugin hooks and source stream) feeds every member, and
 * each member holds only a small queue. Only live subscriptions are shared: an operation with an
 * `after` argument anywhere replays from its own position and runs alone.
 *
 * A member whose consumer falls more than `maxBufferedEvents` results behind is ended with
 * {@link SlowSubscriberError}, as the event bus ends a slow subscriber; the others go on. When the
 * last member leaves, the shared execution is returned (its source unsubscribes).
 */
export class SharedSubscriptions {
  readonly #groups = new Map<string, SharedExecution>();
  readonly #maxBuffered: number;

  /** @param maxBufferedEvents results queued per member before it is ended; default 1,000. */
  constructor(maxBufferedEvents = 1_000) {
    this.#maxBuffered = maxBufferedEvents;
  }

  /** The execution members of `key` join, if one is running. */
  get(key: string): SharedExecution | undefined {
    return this.#groups.get(key);
  }

  /** Shared executions running (for tests and diagnostics). */
  get size(): number {
    return this.#groups.size;
  }

  /**
   * Starts sharing `source` (the enveloped subscription of the first member) under `key`, with the
   * schema, document and operation name every member runs. `onEnd` runs once when it ends (last
   * member gone, source done or failed).
   */
  start(
    key: string,
    source: AsyncIterator<ExecutionResult>,
    operation: { schema: GraphQLSchema; document: DocumentNode; operationName: string | null },
    onEnd?: () => void,
  ): SharedExecution {
    const group = new SharedExecution(source, operation, this.#maxBuffered, () => {
      if (this.#groups.get(key) === group) this.#groups.delete(key);
      onEnd?.();
    });
    this.#groups.set(key, group);
    return group;
  }
}

/**
 * The key members of one shared execution have in common: operation name, variables, the viewer's
 * vaults and scopes, and the document text. Whether the operation may be shared at all is
 * {@link isShareable}'s answer.
 */
export function shareKeyOf(
  query: string,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  viewer: { vaults: Iterable<string>; scopes: Iterable<string> },
): string {
  const vaults = [...viewer.vaults].sort().join(',');
  const scopes = [...viewer.scopes].sort().join(' ');
  return `${operationName ?? ''}\u0000${JSON.stringify(variables ?? {})}\u0000${vaults}\u0000${scopes}\u0000${query}`;
}

/**
 * True when `document`'s operation is a subscription with no `after` argument anywhere and no
 * `@defer` or `@stream` (each event of those is a stream of parts of its own, which a shared
 * execution does not hand out).
 */
export function isShareable(document: DocumentNode, operationName: string | null | undefined): boolean {
  const operation = getOperationAST(document, operationName);
  if (operation?.operation !== 'subscription' || usesIncrementalDelivery(document)) return false;
  let resumes = false;
  visit(document, {
    [Kind.ARGUMENT](node) {
      if (node.name.value === 'after') resumes = true;
    },
  });
  return !resumes;
}

/** One running execution and its members. */
export class SharedExecution {
  readonly members = new Set<Member>();
  readonly schema: GraphQLSchema;
  readonly document: DocumentNode;
  readonly operationName: string | null;
  readonly #source: AsyncIterator<ExecutionResult>;
  readonly #maxBuffered: number;
  readonly #onEnd: () => void;
  #ended = false;

  constructor(
    source: AsyncIterator<ExecutionResult>,
    operation: { schema: GraphQLSchema; document: DocumentNode; operationName: string | null },
    maxBuffered: number,
    onEnd: () => void,
  ) {
    this.#source = source;
    this.schema = operation.schema;
    this.document = operation.document;
    this.operationName = operation.operationName;
    this.#maxBuffered = maxBuffered;
    this.#onEnd = onEnd;
    this.#pump();
  }

  /**
   * A new member: an iterator of every result from now on. `onLeave` runs once when the member ends
   * (returned, finished with the source, or failed). With `deliver`, results are handed to it as they
   * come (synchronously, for every member in turn) and the iterator yields none: it only ends, so
   * the transport's per-result work is skipped; a throwing `deliver` fails the member alone.
   */
  join(
    onLeave?: () => void,
    deliver?: (result: ExecutionResult) => void,
  ): AsyncIterableIterator<ExecutionResult> {
    const member = new Member(this, this.#maxBuffered, onLeave, deliver);
    this.members.add(member);
    return member;
  }

  /** Removes `member`; the last one out returns the shared source. */
  leave(member: Member): void {
    this.members.delete(member);
    if (this.members.size === 0) this.#end();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#onEnd();
    void this.#source.return?.()?.catch(() => undefined);
  }

  #pump(): void {
    this.#source.next().then(
      (step) => {
        if (step.done) {
          this.#end();
          for (const member of [...this.members]) member.finish();
          return;
        }
        for (const member of [...this.members]) member.push(step.value);
        if (!this.#ended) this.#pump();
      },
      (error: unknown) => {
        this.#end();
        for (const member of [...this.members]) member.fail(error);
      },
    );
  }
}

type Waiter = {
  resolve: (step: IteratorResult<ExecutionResult>) => void;
  reject: (error: unknown) => void;
};

/** One subscriber of a shared execution: a bounded queue, no async functions on the way. */
class Member implements AsyncIterableIterator<ExecutionResult> {
  #queue: ExecutionResult[] = [];
  #waiter: Waiter | undefined;
  #failure: unknown;
  #done = false;
  readonly #group: SharedExecution;
  readonly #maxBuffered: number;
  readonly #onLeave: (() => void) | undefined;
  readonly #deliver: ((result: ExecutionResult) => void) | undefined;

  constructor(
    group: SharedExecution,
    maxBuffered: number,
    onLeave: (() => void) | undefined,
    deliver: ((result: ExecutionResult) => void) | undefined,
  ) {
    this.#group = group;
    this.#maxBuffered = maxBuffered;
    this.#onLeave = onLeave;
    this.#deliver = deliver;
  }

  push(result: ExecutionResult): void {
    if (this.#done) return;
    if (this.#deliver) {
      try {
        this.#deliver(result);
      } catch (error) {
        this.#group.leave(this);
        this.fail(error);
      }
      return;
    }
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter.resolve({ value: result, done: false });
    } else if (this.#queue.length >= this.#maxBuffered) {
      this.#group.leave(this);
      this.fail(new SlowSubscriberError(this.#maxBuffered));
    } else {
      this.#queue.push(result);
    }
  }

  /** Ends normally: a waiting `next()` answers done. */
  finish(): void {
    this.#end()?.resolve({ value: undefined, done: true });
  }

  /** Ends with `error`: the waiting `next()`, or else the next one, rejects with it. */
  fail(error: unknown): void {
    if (this.#done) return;
    const waiter = this.#end();
    if (waiter) waiter.reject(error);
    else this.#failure = error;
  }

  /** Marks the member done (once) and hands back the `next()` waiting, if any. */
  #end(): Waiter | undefined {
    if (this.#done) return undefined;
    this.#done = true;
    this.#onLeave?.();
    this.#queue = [];
    const waiter = this.#waiter;
    this.#waiter = undefined;
    return waiter;
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    if (this.#queue.length > 0) return Promise.resolve({ value: this.#queue.shift()!, done: false });
    if (this.#failure !== undefined) {
      const failure = this.#failure;
      this.#failure = undefined;
      return Promise.reject(failure);
    }
    if (this.#done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<ExecutionResult>> {
    this.finish();
    this.#group.leave(this);
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ExecutionResult> {
    return this;
  }
}
