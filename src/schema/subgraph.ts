import { entitiesResolver, printSubgraphSchema } from '@apollo/subgraph';
import { InputValidationError } from '@pothos/plugin-validation';
import {
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
  GraphQLUnionType,
  isObjectType,
  valueFromASTUntyped,
} from 'graphql';
import type { GraphQLContext } from '../context.ts';
import { OperationLimitError } from '../errors.ts';
import { ConcurrencyLimit } from '../lib/concurrency.ts';
import { entities } from './entity.ts';
import { costExtension } from './paging.ts';

/** The Federation version the subgraph links (`@link(url:)`); Hive Gateway and Apollo Router 2 read it. */
export const FEDERATION_LINK_URL = 'https://specs.apollo.dev/federation/v2.6';

/**
 * The subgraph form of the gateway's schema (`FEDERATION=on`, issue 22 item 1), from `base`, a
 * build of the same Pothos builder that nothing else holds (its entity types get their `@key` in
 * place):
 * - `schema @link(url: FEDERATION_LINK_URL, import: ["@key"])`, and `@key(fields: …)` on each
 *   registered entity (src/schema/entity.ts), in type extensions as graphql-tools prints them;
 * - `Query._service { sdl }`: that schema printed with its directives (`printSubgraphSchema` of
 *   @apollo/subgraph), what a router or a registry composes;
 * - `Query._entities(representations:)`: each representation read by its type's reader, in order,
 *   through @apollo/subgraph's `entitiesResolver`, so through the request's DataLoaders and the card
 *   read cache (N references of one area = one batch of reads). At most
 *   `ENTITIES_MAX_REPRESENTATIONS` representations (`too-many-ids`, as `nodes`), a limit of its own
 *   that router pages fit (a router never splits an entity fetch); the cost counts one upstream call
 *   per distinct representation (250 references to 25 cards are 25 reads); at most
 *   `ENTITIES_READ_CONCURRENCY` references are read at once, the others wait for a slot
 *   (docs/entity-batches.md). A representation that is not an object naming a resolvable entity
 *   type is an `invalid-input` error on the field.
 *
 * Not @pothos/plugin-federation: its 4.4.2 imports @pothos/plugin-directives (not installed) and
 * `EntityType`, `entitiesField` and `serviceField` from `@apollo/subgraph/dist/types`, which
 * @apollo/subgraph 2.15 no longer has; the same parts are built here from @apollo/subgraph's
 * exported ones.
 * @throws Error when a registered entity type is missing from `base`.
 */
export function toSubgraphSchema(base: GraphQLSchema): GraphQLSchema {
  const entityTypes: GraphQLObjectType[] = [];
  for (const [name, entity] of entities) {
    const type = base.getType(name);
    if (!isObjectType(type)) throw new Error(`entity ${name} is not an object type of the schema`);
    // The build is the subgraph's own: its type objects are adjusted in place (graphql-js keeps
    // `extensions` as a plain member; Pothos' federation plugin sets the same members).
    Object.assign(type, {
      extensions: {
        ...type.extensions,
        directives: { key: { fields: entity.key } },
        apollo: {
          subgraph: {
            resolveReference: (reference: Record<string, unknown>, context: GraphQLContext) =>
              entityReads(context).run(() => entity.resolveReference(reference, context)),
          },
        },
      },
    });
    entityTypes.push(type);
  }
  const linked = new GraphQLSchema({
    ...base.toConfig(),
    extensions: {
      ...base.extensions,
      directives: { link: { url: FEDERATION_LINK_URL, import: ['@key'] } },
    },
  });
  const sdl = printSubgraphSchema(linked);
  const queryConfig = base.getQueryType()!.toConfig();
  const entityUnion = new GraphQLUnionType({
    name: '_Entity',
    types: entityTypes,
    resolveType: (value: { __typename: string }) => value.__typename,
  });
  const resolvableNames = new Set(entityTypes.map((type) => type.name));
  const query = new GraphQLObjectType({
    ...queryConfig,
    fields: {
      ...queryConfig.fields,
      _service: {
        type: new GraphQLNonNull(ServiceType),
        description:
          'This subgraph for a Federation router or registry: its SDL with its @link and @key directives.',
        resolve: () => ({ sdl }),
      },
      _entities: {
        type: new GraphQLNonNull(new GraphQLList(entityUnion)),
        description:
          "Entities by their key representations, in order, read in the caller's vault; null for each one the vault does not hold. At most `ENTITIES_MAX_REPRESENTATIONS` representations (1,000 unless the operator set otherwise; error code `too-many-ids`).",
        args: {
          representations: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(AnyType))) },
        },
        // One read per distinct representation: the request's loaders read a repeated one once.
        extensions: costExtension({
          upstreamCallsPerItem: 1,
          listSize: { argument: 'representations', distinct: true },
        }),
        resolve: (_root, args: { representations: unknown[] }, context: GraphQLContext, info) => {
          const { representations } = args;
          const max = context.limits.entitiesMaxRepresentations;
          if (representations.length > max) {
            throw new OperationLimitError(
              `_entities accepts at most ${max} representations, ${representations.length} were sent`,
              'too-many-ids',
            );
          }
          const issues = representations.flatMap((representation, index) =>
            isRepresentationOf(representation, resolvableNames)
              ? []
              : [
                  {
                    message: 'must be an object whose __typename names an entity',
                    path: ['representations', index],
                  },
                ],
          );
          if (issues.length > 0) throw new InputValidationError({ issues });
          return entitiesResolver({
            representations: representations as { __typename: string }[],
            context,
            info,
          });
        },
      },
    },
  });
  const config = linked.toConfig();
  return new GraphQLSchema({
    ...config,
    query,
    types: [...config.types.filter((type) => type.name !== query.name), query],
  });
}

const readLimits = new WeakMap<GraphQLContext, ConcurrencyLimit>();

/** The bound on the entity reads of one request (`ENTITIES_READ_CONCURRENCY`), made on first use. */
function entityReads(context: GraphQLContext): ConcurrencyLimit {
  let limit = readLimits.get(context);
  if (!limit) {
    limit = new ConcurrencyLimit(context.limits.entitiesReadConcurrency);
    readLimits.set(context, limit);
  }
  return limit;
}

/** `_Service`: the subgraph's SDL. */
const ServiceType = new GraphQLObjectType({
  name: '_Service',
  fields: { sdl: { type: GraphQLString } },
});

/** `_Any`: an entity representation, any JSON value (checked by `_entities`). */
const AnyType = new GraphQLScalarType({
  name: '_Any',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (node, variables) => valueFromASTUntyped(node, variables),
});

function isRepresentationOf(value: unknown, typeNames: ReadonlySet<string>): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { __typename?: unknown }).__typename === 'string' &&
    typeNames.has((value as { __typename: string }).__typename)
  );
}
