import {
  DirectiveLocation,
  GraphQLBoolean,
  GraphQLDirective,
  GraphQLInt,
  GraphQLNonNull,
  type GraphQLSchema,
  GraphQLString,
  specifiedDirectives,
} from 'graphql';
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

/**
 * `@defer`, with the arguments and locations of graphql-tools' definition (the one
 * `@graphql-yoga/plugin-defer-stream` adds and `@graphql-tools/executor` reads), described for clients.
 */
export const DeferDirective = new GraphQLDirective({
  name: 'defer',
  description:
    'Sends the fields of this fragment in a later part of the answer, so the rest of the answer does not wait for them. Parts arrive over multipart HTTP (`Accept: multipart/mixed`), server-sent events and graphql-ws; a request that accepts only JSON gets the whole answer at once.',
  locations: [DirectiveLocation.FRAGMENT_SPREAD, DirectiveLocation.INLINE_FRAGMENT],
  args: {
    if: {
      type: new GraphQLNonNull(GraphQLBoolean),
      defaultValue: true,
      description: 'Deferred when true (the default); false answers the fragment with the rest.',
    },
    label: {
      type: GraphQLString,
      description: 'A name, unique in the operation, that the later part carries to tell fragments apart.',
    },
  },
});

/** `@stream`, with the arguments and locations of graphql-tools' definition, described for clients. */
export const StreamDirective = new GraphQLDirective({
  name: 'stream',
  description:
    'Sends the items of this list one by one in later parts of the answer after the first `initialCount`, each as soon as it is resolved. Same transports as `@defer`.',
  locations: [DirectiveLocation.FIELD],
  args: {
    if: {
      type: new GraphQLNonNull(GraphQLBoolean),
      defaultValue: true,
      description: 'Streamed when true (the default); false answers the whole list with the rest.',
    },
    label: {
      type: GraphQLString,
      description: 'A name, unique in the operation, that the later parts carry to tell lists apart.',
    },
    initialCount: {
      type: GraphQLInt,
      defaultValue: 0,
      description: 'How many items the first part holds.',
    },
  },
});

/**
 * The gateway's GraphQL schema, built once at import, declaring `@defer` and `@stream` beside the
 * specified directives (introspection and schema.graphql show them; codegen validates deferred
 * documents against them).
 */
export const schema = describeResultData(
  builder.toSchema({
    sortSchema: true,
    directives: [...specifiedDirectives, DeferDirective, StreamDirective],
  }),
);

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
