import type { GraphQLSchema } from 'graphql';
import { builder } from './builder.ts';
import { describeResultData } from './generated-descriptions.ts';
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

let subgraph: Promise<GraphQLSchema> | undefined;

/**
 * The gateway's schema as a Federation v2 subgraph (`FEDERATION=on`, src/schema/subgraph.ts): a
 * second build of the same builder, made on first call. src/schema/subgraph.ts (and
 * `@apollo/subgraph` with it) is imported then, so a standalone gateway neither loads nor builds it
 * (issue 21 item 2: cold start).
 */
export function subgraphSchema(): Promise<GraphQLSchema> {
  subgraph ??= import('./subgraph.ts').then(({ toSubgraphSchema }) =>
    toSubgraphSchema(describeResultData(builder.toSchema({ sortSchema: true }))),
  );
  return subgraph;
}
