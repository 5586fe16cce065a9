import type { GraphQLSchema } from 'graphql';
import { builder } from './builder.ts';
import { describeResultData } from './generated-descriptions.ts';
import { toSubgraphSchema } from './subgraph.ts';
import './scalars.ts';
import './errors.ts';
import './viewer.ts';
import './card.ts';
import './card-update-subscription.ts';
import './account-updater-card.ts';
import './card-event.ts';
import './card-attributes.ts';
import './network-token.ts';
import './unmapped-notification.ts';
import './organization.ts';

/** The gateway's GraphQL schema, built once at import. */
export const schema = describeResultData(builder.toSchema({ sortSchema: true }));

let subgraph: GraphQLSchema | undefined;

/**
 * The gateway's schema as a Federation v2 subgraph (`FEDERATION=on`, src/schema/subgraph.ts): a
 * second build of the same builder, made on first call (a standalone gateway never builds it).
 */
export function subgraphSchema(): GraphQLSchema {
  subgraph ??= toSubgraphSchema(describeResultData(builder.toSchema({ sortSchema: true })));
  return subgraph;
}
