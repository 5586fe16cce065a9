import { brandWithType, type ObjectRef, type SchemaTypes } from '@pothos/core';
import { decodeGlobalID } from '@pothos/plugin-relay';
import type { GraphQLContext } from '../context.ts';
import { readNotificationId } from '../events/notification-envelope.ts';

/**
 * Relay object identification of logged notifications (`CardEvent`, `NetworkTokenEvent`).
 *
 * Their `id` is the notification id the provider assigned (a UUID, the same on every redelivery),
 * and it stays what it was: clients compare it with the webhook's `id` and it is `CardEvent`'s
 * federation key. It is unique across kinds and vaults, so it is already a global ID in Relay's
 * sense; `node(id:)` accepts it as it is. The global IDs of the other node types (`Card`,
 * `AccountUpdaterCard`) are Pothos' base64 `Type:id`, decoded first.
 */

/** Typename {@link decodeNodeID} gives a notification id; the `node` resolvers look it up themselves. */
export const NOTIFICATION_NODE = '__notification';

/**
 * Reads one logged notification of a kind by its id in the caller's vaults, branded with its
 * GraphQL type; null when none of them holds it or the token lacks the kind's scope.
 */
export type NotificationNodeReader = (context: GraphQLContext, id: string) => Promise<object | null>;

/** The readers registered by the notification kinds (src/schema/card-event.ts, network-token.ts). */
const readers: NotificationNodeReader[] = [];

/** Registers the reader of one notification kind for `node(id:)` and `nodes(ids:)`. */
export function registerNotificationNode(reader: NotificationNodeReader): void {
  readers.push(reader);
}

/**
 * The builder's `relay.decodeGlobalID`: Pothos' base64 `Type:id` when the value decodes to one,
 * else a notification id as `{ typename: NOTIFICATION_NODE, id }`.
 * @throws Pothos' `Invalid global ID` validation error for anything else.
 */
export function decodeNodeID(globalID: string): { typename: string; id: string } {
  try {
    return decodeGlobalID(globalID);
  } catch (error) {
    if (readNotificationId(globalID) === globalID) return { typename: NOTIFICATION_NODE, id: globalID };
    throw error;
  }
}

/**
 * The logged notification with this id, from the first kind whose reader finds it; null when none
 * does (unknown, past retention, another vault's, or a kind the token may not read).
 */
export async function readNotificationNode(context: GraphQLContext, id: string): Promise<object | null> {
  for (const read of readers) {
    const node = await read(context, id);
    if (node !== null) return node;
  }
  return null;
}

/** `node`, marked as an object of `type` so that the `Node` interface resolves it to that type. */
export function brandedNode<Types extends SchemaTypes, T extends object>(
  node: T,
  type: ObjectRef<Types, T>,
): T {
  brandWithType<Types>(node, type);
  return node;
}
