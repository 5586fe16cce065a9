import type { ArgBuilder, InputFieldMap, ObjectRef } from '@pothos/core';
import { InputValidationError } from '@pothos/plugin-validation';
import type { UpstreamScope } from '../auth/viewer.ts';
import type { GraphQLContext } from '../context.ts';
import { encodeCursor, type HistoryCursor } from '../events/event-log.ts';
import { type BuilderTypes, builder } from './builder.ts';
import { costExtension, EVENT_PAGE_SIZE, eventCursorArg, eventHistoryPage } from './paging.ts';

/** What the root fields of one event kind read: its durable stream (src/events). */
interface EventStreamOf<Filter, Event> {
  resume(filter: Filter, after: bigint | null, weight?: () => number): AsyncIterableIterator<Event>;
  history(filter: Filter, after: HistoryCursor | null, limit: number): Promise<readonly Event[]>;
}

/** One event kind (card events, network token events) as {@link eventRootFields} exposes it. */
export interface EventKind<Event, Filter, Args> {
  /** Name of the subscription and of the deprecated history field, e.g. `cardEvents`. */
  name: string;
  /** Name of the history field that returns the connection itself, e.g. `cardEventHistory`. */
  historyName: string;
  /** Type name the connection and edge types are named after, e.g. `CardEvent` (`CardEventConnection`). */
  typeName: string;
  type: ObjectRef<BuilderTypes, Event>;
  /** The kind in error messages, e.g. `card event` (`is not a card event cursor`). */
  what: string;
  /** Scope the client token must grant to read these events. */
  scope: UpstreamScope;
  /** Descriptions of `Subscription.<name>` and `Query.<name>`. */
  descriptions: { live: string; history: string };
  /** The arguments selecting events, shared by both fields (the subscription adds `after`). */
  filterArgs: (t: { arg: ArgBuilder<BuilderTypes> }) => InputFieldMap;
  /** The caller's filter from those arguments. */
  filter: (context: GraphQLContext, args: Args) => Filter;
  stream: (context: GraphQLContext) => EventStreamOf<Filter, Event>;
}

/**
 * The root fields of an event kind: `Subscription.<name>`, live events resumable with `after`
 * (every retained event after the cursor replayed first, then live with no gap and no duplicate);
 * `Query.<historyName>`, the retained history as a forward-only Relay connection returned at the
 * field itself (what Relay's `@connection`, Apollo's `relayStylePagination` and urql's
 * `relayPagination` page), failing with the error's `code` in `errors[].extensions`; and the
 * deprecated `Query.<name>`, the same page inside a result union. Each fails with
 * `InputValidationError` (`invalid-input`) for a cursor that is not one of the kind's.
 */
export function eventRootFields<Event extends { position: bigint; timestampMs: number }, Filter, Args>(
  kind: EventKind<Event, Filter, Args>,
): void {
  const type = kind.type as ObjectRef<BuilderTypes, { position: bigint; timestampMs: number }>;
  builder.subscriptionField(kind.name, (t) =>
    t.field({
      type,
      description: kind.descriptions.live,
      authScopes: { scope: kind.scope },
      args: {
        ...kind.filterArgs(t),
        after: t.arg.string({
          required: false,
          description: 'Resume after this cursor (replay, then live).',
        }),
      },
      subscribe: (_root, args, context) => {
        const after = args.after ? eventCursorArg(args.after, kind.what).position : null;
        // A shared live execution (src/live/) subscribes once for its members: the bus counts them.
        return kind
          .stream(context)
          .resume(kind.filter(context, args as Args), after, context.liveSubscribers);
      },
      resolve: (event) => event,
    }),
  );
  builder.queryField(kind.historyName, (t) =>
    t.connection(
      {
        type,
        nullable: true,
        description: `${kind.descriptions.history} ${HISTORY_ERRORS}`,
        authScopes: { scope: kind.scope },
        extensions: costExtension({ listSize: { argument: 'first', ...EVENT_PAGE_SIZE } }),
        args: kind.filterArgs(t),
        resolve: (_root, args, context) =>
          eventHistoryPage(args, kind.what, (after, limit) =>
            kind.stream(context).history(kind.filter(context, args as Args), after, limit),
          ),
      },
      {
        name: `${kind.typeName}Connection`,
        description: `A page of ${kind.what}s, oldest first, with its pagination state.`,
      },
      { name: `${kind.typeName}Edge`, description: `One ${kind.what} of a page, with its cursor.` },
    ),
  );
  builder.queryField(kind.name, (t) =>
    t.connection({
      type,
      description: kind.descriptions.history,
      deprecationReason: `Use \`${kind.historyName}\`: the same page returned as the connection itself, which Relay, Apollo Client and urql can page; its errors carry their code in \`errors[].extensions.code\`.`,
      authScopes: { scope: kind.scope },
      extensions: costExtension({ listSize: { argument: 'first', ...EVENT_PAGE_SIZE } }),
      errors: { types: [InputValidationError] },
      args: kind.filterArgs(t),
      resolve: (_root, args, context) =>
        eventHistoryPage(args, kind.what, (after, limit) =>
          kind.stream(context).history(kind.filter(context, args as Args), after, limit),
        ),
    }),
  );
}

/**
 * How a history field that returns its connection directly reports failures, for its description.
 */
export const HISTORY_ERRORS =
  'Null on failure, with the error in `errors[].extensions.code`: `unauthenticated`, `forbidden`, `vault-required`, `vault-not-allowed`, `invalid-input` (`last`, `before` or a cursor not of this list).';

/**
 * The members every logged event has (src/events/event-log.ts `Logged` of a notification), with the
 * three times both notification kinds carry (ISO 8601 strings as received).
 */
interface LoggedEvent {
  id: string;
  tenant: string;
  position: bigint;
  timestampMs: number;
  outOfOrder: boolean;
  timestamp: string;
  timestampFlag?: 'future' | 'invalid';
  sentTimestamp?: string;
  occurredAt?: string;
  createdAt?: string;
}

/** Why an event's own time was not used as its `timestamp` (src/events/notification-envelope.ts `TimestampFlag`). */
const EventTimestampFlagEnum = builder.enumType('EventTimestampFlag', {
  description: "Why a notification's own time was not used as the event's `timestamp`.",
  values: {
    FUTURE: {
      value: 'future',
      description: 'It was later than the time of receipt by more than the gateway allows.',
    },
    INVALID: {
      value: 'invalid',
      description: 'It was no date-time, or no real date (for example February 30).',
    },
  } as const,
});

/**
 * The fields every accepted notification exposes: `cursor` (its position in `log`), `outOfOrder`
 * (described by `outOfOrder`), the notification `id` and the `tenant`, and its times as `DateTime`:
 * `timestamp` (non-null), `occurredAt` and `createdAt` (each null when the notification has none:
 * the documented notifications carry per-event subsets of their members, issue 19 item 3), each
 * described as the notification kind defines it. Times are ISO 8601 with a zone (a zone-less time
 * was read as UTC).
 */
export function loggedEventFields<Event extends LoggedEvent>(
  t: PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, Event>,
  descriptions: { log: string; outOfOrder: string; timestamp: string; occurredAt: string; createdAt: string },
) {
  return {
    timestamp: t.field({
      type: 'DateTime',
      description: descriptions.timestamp,
      resolve: (e) => e.timestamp,
    }),
    timestampFlag: t.field({
      type: EventTimestampFlagEnum,
      nullable: true,
      description:
        "Set when the notification's own time could not be used: `timestamp` is then another time member of the notification or the time of receipt, `sentTimestamp` what was sent, and the event is never `outOfOrder` nor makes another event so. Null for a usable time.",
      resolve: (e) => e.timestampFlag,
    }),
    sentTimestamp: t.string({
      nullable: true,
      description:
        'The time the notification sent (as sent when it was no date-time, else normalised; at most 64 characters), when `timestampFlag` is set; else null.',
      resolve: (e) => e.sentTimestamp,
    }),
    occurredAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: descriptions.occurredAt,
      resolve: (e) => e.occurredAt,
    }),
    createdAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: descriptions.createdAt,
      resolve: (e) => e.createdAt,
    }),
    cursor: t.string({
      description: `Position in the durable ${descriptions.log}: pass it as \`after\` to resume a subscription or page history.`,
      resolve: (event) => encodeCursor(event),
    }),
    outOfOrder: t.boolean({ description: descriptions.outOfOrder, resolve: (event) => event.outOfOrder }),
    id: t.id({
      description:
        'Notification id (UUID); the same on every redelivery. Also its global ID: `node(id:)` reads the event back by it.',
      resolve: (event) => event.id,
    }),
    tenant: t.string({
      description: 'Vault (tenant) the event belongs to.',
      resolve: (event) => event.tenant,
    }),
  };
}

/**
 * `NotificationSource`: which of the provider's areas sent a notification, from its `event` prefix
 * (src/events/notification-envelope.ts `NotificationSource`; sandbox contract §8).
 */
export const NotificationSourceEnum = builder.enumType('NotificationSource', {
  description: "Which of the provider's areas sent a notification, from its `event` prefix.",
  values: {
    ACCOUNT_UPDATER: { value: 'account_updater', description: 'Account updater v1 (`au_card.*`).' },
    NETWORK_TOKENS: { value: 'network_tokens', description: 'Network tokens (`network_token.*`).' },
    CARD_MANAGEMENT: {
      value: 'card_management',
      description: 'The card interface (`cmp_au_card.*`, `cmp_network_token.*`).',
    },
    UNKNOWN: { value: 'unknown', description: 'A prefix this schema does not know (or no `event`).' },
  } as const,
});
