import {
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLField,
  GraphQLIncludeDirective,
  type GraphQLObjectType,
  type GraphQLSchema,
  GraphQLSkipDirective,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getOperationAST,
  getVariableValues,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  Kind,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../context.ts';
import type { FieldCost } from '../schema/paging.ts';

/** Limits of {@link useOperationCost} (src/config/limits.ts). */
export interface OperationCostLimits {
  /** Highest cost of one operation (`OPERATION_MAX_COST`). */
  maxCost: number;
  /** Upstream calls one operation, or one subscription event, may make (`UPSTREAM_CALL_BUDGET`). */
  upstreamCallBudget: number;
  /** Most ids `nodes(ids:)` accepts (`NODES_MAX_IDS`); the cost counts no more. */
  nodesMaxIds: number;
}

/** What an operation is estimated to cost before it runs. */
export interface OperationCost {
  /** Fields returning an object, each multiplied by the list sizes around it. */
  cost: number;
  /** Upstream calls the fields with an `upstreamCalls` cost may make, multiplied likewise. */
  upstreamCalls: number;
}

/**
 * Bounds what one operation may ask of the gateway and, through it, of the upstream (issue 10,
 * class 3), on every transport (HTTP, SSE and graphql-ws all execute through Yoga's envelop):
 *
 * 1. Before execution, once the variables are coerced (graphql-armor's cost limit runs at
 *    validation, before variables exist, so `first: $n` counted as 1), the operation's cost is
 *    computed with {@link operationCost}: page sizes (`first`) and id lists (`ids`) multiply the
 *    fields below them, using the same page-size constants the resolvers clamp to
 *    (src/schema/paging.ts). Over `maxCost`, or over `upstreamCallBudget` estimated upstream calls,
 *    the operation is refused before any resolver runs: one error with code
 *    `operation-too-expensive` (HTTP 400).
 * 2. While it runs, every upstream call is counted against the context's budget at the upstream
 *    client boundary (src/upstream/budget.ts); a call beyond it fails with
 *    `upstream-budget-exceeded` on its field (errors-as-data where the field has a result union).
 *    A subscription gets a fresh budget for each event.
 */
export function useOperationCost(limits: OperationCostLimits): Plugin<GraphQLContext> {
  // Costs that read no variable, per parsed document (Yoga's parser cache hands out one
  // DocumentNode per document text) and operation name.
  const fixedCosts = new WeakMap<DocumentNode, Map<string | null, OperationCost>>();

  function refusal(args: {
    schema: GraphQLSchema;
    document: DocumentNode;
    operationName?: string | null | undefined;
    variableValues?: Record<string, unknown> | null | undefined;
  }): GraphQLError | undefined {
    const fixed = fixedCosts.get(args.document)?.get(args.operationName ?? null);
    // A cost within the limits refuses nothing whatever the variables; over them, the full path
    // below decides (invalid variables are execution's to report).
    if (fixed && fixed.cost <= limits.maxCost && fixed.upstreamCalls <= limits.upstreamCallBudget) {
      return undefined;
    }
    const cost = operationCost(
      args.schema,
      args.document,
      args.operationName,
      args.variableValues,
      limits.nodesMaxIds,
    );
    if (!cost) return undefined;
    if (!cost.readsVariables) {
      const byName = fixedCosts.get(args.document) ?? new Map<string | null, OperationCost>();
      fixedCosts.set(args.document, byName);
      byName.set(args.operationName ?? null, { cost: cost.cost, upstreamCalls: cost.upstreamCalls });
    }
    let message: string | undefined;
    if (cost.cost > limits.maxCost) {
      message = `The operation costs ${cost.cost}, more than the limit of ${limits.maxCost}: ask for smaller pages (first), fewer ids or fewer nested objects`;
    } else if (cost.upstreamCalls > limits.upstreamCallBudget) {
      message = `The operation may make ${cost.upstreamCalls} upstream calls, more than the budget of ${limits.upstreamCallBudget}: ask for smaller pages (first), fewer ids or fewer joined fields`;
    }
    if (!message) return undefined;
    return new GraphQLError(message, {
      extensions: {
        code: 'operation-too-expensive',
        cost: cost.cost,
        upstreamCalls: cost.upstreamCalls,
        http: { status: 400 },
      },
    });
  }

  return {
    onExecute({ args, setResultAndStopExecution }) {
      const error = refusal(args);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const error = refusal(args);
      if (error) {
        setResultAndStopExecution({ errors: [error] });
        return;
      }
      return {
        onSubscribeResult: ({ args: resultArgs }) => ({
          // Each event is executed once the previous one was delivered: a fresh budget per event.
          onNext: () => resultArgs.contextValue.upstreamBudget?.reset(),
        }),
      };
    },
  };
}

/**
 * The cost of the selected operation of `document` with its coerced variables (see
 * {@link useOperationCost}); undefined when the operation or its variables are invalid (execution
 * reports that itself). A field returning objects counts 1 per object (its list size, see
 * {@link FieldCost}), multiplied by the list sizes above it; scalars count 0; `extensions.cost` adds
 * upstream calls. Every alternative of a union or interface
 * selection is counted (an upper bound). Introspection fields count nothing. `readsVariables` says
 * whether any variable took part (`@skip`/`@include` conditions, arguments of list-sized fields):
 * when none did, the cost holds for every request of the document, and {@link useOperationCost}
 * remembers it per parsed document.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
  nodesMaxIds = Number.POSITIVE_INFINITY,
): (OperationCost & { readsVariables: boolean }) | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation) return undefined;
  const rootType = schema.getRootType(operation.operation);
  if (!rootType) return undefined;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables ?? {});
  if (coerced.errors) return undefined;
  const variables = coerced.coerced;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const total = { cost: 0, upstreamCalls: 0, readsVariables: false };

  function included(node: Parameters<typeof getDirectiveValues>[1]): boolean {
    if (node.directives?.some((directive) => directive.arguments?.some((a) => hasVariable(a.value)))) {
      total.readsVariables = true;
    }
    if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false;
    if (getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if === false) return false;
    return true;
  }

  function visit(
    selectionSet: SelectionSetNode,
    parentType: ReturnType<typeof getNamedType>,
    multiplier: number,
    fragmentPath: ReadonlySet<string>,
  ): void {
    for (const selection of selectionSet.selections) {
      if (!included(selection)) continue;
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition
          ? schema.getType(selection.typeCondition.name.value)
          : parentType;
        visit(selection.selectionSet, type ?? parentType, multiplier, fragmentPath);
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        // Validation refuses fragment cycles; the path check only keeps this walk finite regardless.
        if (!fragment || fragmentPath.has(name)) continue;
        const type = schema.getType(fragment.typeCondition.name.value) ?? parentType;
        visit(fragment.selectionSet, type, multiplier, new Set([...fragmentPath, name]));
        continue;
      }
      if (selection.name.value.startsWith('__')) continue;
      if (!isObjectType(parentType) && !isInterfaceType(parentType)) continue;
      const field = (parentType as GraphQLObjectType).getFields()[selection.name.value];
      if (!field) continue;
      const fieldType = getNamedType(field.type);
      if (!isCompositeType(fieldType)) continue;
      const fieldCost = field.extensions?.cost as FieldCost | undefined;
      const size = listSize(field, selection, fieldCost, variables, nodesMaxIds);
      if (fieldCost?.listSize && selection.arguments?.some((a) => hasVariable(a.value))) {
        total.readsVariables = true;
      }
      total.cost += multiplier * size;
      total.upstreamCalls +=
        multiplier * ((fieldCost?.upstreamCalls ?? 0) + (fieldCost?.upstreamCallsPerItem ?? 0) * size);
      if (selection.selectionSet) visit(selection.selectionSet, fieldType, multiplier * size, fragmentPath);
    }
  }

  visit(operation.selectionSet, rootType, 1, new Set());
  return total;
}

/** Whether a value literal is, or holds, a variable. */
function hasVariable(value: ValueNode): boolean {
  if (value.kind === Kind.VARIABLE) return true;
  if (value.kind === Kind.LIST) return value.values.some(hasVariable);
  if (value.kind === Kind.OBJECT) return value.fields.some((field) => hasVariable(field.value));
  return false;
}

/** How many items a field with a `listSize` cost returns at most (1 without one). */
function listSize(
  field: GraphQLField<unknown, unknown>,
  node: Parameters<typeof getArgumentValues>[1],
  fieldCost: FieldCost | undefined,
  variables: Record<string, unknown>,
  nodesMaxIds: number,
): number {
  const spec = fieldCost?.listSize;
  if (!spec) return 1;
  let args: Record<string, unknown>;
  try {
    args = getArgumentValues(field, node, variables);
  } catch {
    // Execution reports the bad argument; count the largest page meanwhile.
    return spec.max ?? spec.default ?? 1;
  }
  const value = args[spec.argument];
  const max =
    spec.argument === 'ids' ? Math.min(spec.max ?? nodesMaxIds, nodesMaxIds) : (spec.max ?? Infinity);
  if (Array.isArray(value)) return Math.min(spec.distinct ? distinctCount(value) : value.length, max);
  // The resolvers serve at least one item for any `first` (src/schema/paging.ts pageSize).
  if (typeof value === 'number') return Math.min(Math.max(value, 1), max);
  return spec.default ?? 1;
}

/** How many distinct values `values` holds, objects compared by their JSON with sorted keys. */
function distinctCount(values: readonly unknown[]): number {
  return new Set(values.map(canonicalJson)).size;
}

/** JSON of `value` with every object's keys sorted, so equal representations give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
