import {
  createOperationDescriptor,
  type Disposable,
  Environment,
  type FetchFunction,
  fetchQuery,
  type GraphQLTaggedNode,
  getSelector,
  Network,
  type ReaderFragment,
  RecordSource,
  type SingularReaderSelector,
  Store,
  type Variables,
} from 'relay-runtime';

/**
 * A Relay client of cardgraph without React: the environment, and the two things `react-relay`'s
 * `usePaginationFragment` and `useRefetchableFragment` do with relay-runtime, written out so that a
 * test (test/clients/relay.test.ts) runs them against a real gateway. In a React app the hooks do
 * exactly this; see docs/relay-pagination.md for the component version.
 */

/**
 * A Relay environment on cardgraph's `/graphql` (HTTP POST, JSON), sending `token` as a bearer
 * token. Errors in `errors[]` reach Relay, which throws for a query whose data is null.
 */
export function createCardgraphEnvironment(graphqlUrl: string, token: string): Environment {
  const fetchFn: FetchFunction = async (request, variables) => {
    const response = await fetch(graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: request.text, operationName: request.name, variables }),
    });
    return response.json();
  };
  return new Environment({ network: Network.create(fetchFn), store: new Store(new RecordSource()) });
}

/** The page state Relay's `@connection` adds to a connection it pages. */
interface PagedConnection<Edge> {
  readonly edges: readonly Edge[];
  readonly pageInfo: { readonly endCursor?: string | null; readonly hasNextPage?: boolean };
}

/**
 * A paged list as `usePaginationFragment` keeps it: the first page fetched with `query`, the
 * fragment (a `@refetchable` fragment on `Query` holding one `@connection`) read from the store,
 * and `loadNext` fetching the fragment's pagination query after the connection's `endCursor`. Relay's
 * connection handler appends each page's edges to the one connection record in the store.
 */
export class PaginatedList<Data, Edge> {
  readonly #environment: Environment;
  readonly #query: GraphQLTaggedNode;
  readonly #fragment: ReaderFragment;
  readonly #paginationQuery: GraphQLTaggedNode;
  readonly #variables: Variables;
  readonly #connectionOf: (data: Data) => PagedConnection<Edge> | null | undefined;
  #selector: SingularReaderSelector | null = null;
  #retained: Disposable[] = [];

  /**
   * @param query the query spreading `fragment` (the first page); its variables are `variables`.
   * @param fragment the `@refetchable` fragment with the `@connection`.
   * @param paginationQuery the query relay-compiler generated for `@refetchable(queryName:)`.
   * @param connectionOf the connection in the fragment's data.
   */
  constructor(options: {
    environment: Environment;
    query: GraphQLTaggedNode;
    fragment: ReaderFragment;
    paginationQuery: GraphQLTaggedNode;
    variables: Variables;
    connectionOf: (data: Data) => PagedConnection<Edge> | null | undefined;
  }) {
    this.#environment = options.environment;
    this.#query = options.query;
    this.#fragment = options.fragment;
    this.#paginationQuery = options.paginationQuery;
    this.#variables = options.variables;
    this.#connectionOf = options.connectionOf;
  }

  /**
   * Fetches the first page and retains it (as `useLazyLoadQuery` does).
   * @throws the network's error, or Relay's when the query's data is null.
   */
  async load(): Promise<Data> {
    await fetchQuery(this.#environment, this.#query, this.#variables).toPromise();
    const operation = createOperationDescriptor(asRequest(this.#query), this.#variables);
    this.#retained.push(this.#environment.retain(operation));
    const root = this.#environment.lookup(operation.fragment).data;
    this.#selector = getSelector(this.#fragment, root) as SingularReaderSelector;
    return this.data();
  }

  /** The fragment's data as the store holds it now: every page loaded so far, in order. */
  data(): Data {
    if (!this.#selector) throw new Error('load() first');
    return this.#environment.lookup(this.#selector).data as Data;
  }

  /** Whether the connection says more items follow (`pageInfo.hasNextPage`). */
  hasNext(): boolean {
    return this.#connectionOf(this.data())?.pageInfo.hasNextPage === true;
  }

  /**
   * Fetches the next `count` items after the connection's `endCursor`, as `loadNext(count)` does,
   * and returns the merged data.
   */
  async loadNext(count: number): Promise<Data> {
    const cursor = this.#connectionOf(this.data())?.pageInfo.endCursor ?? null;
    const variables = { ...this.#variables, count, cursor };
    await fetchQuery(this.#environment, this.#paginationQuery, variables).toPromise();
    const operation = createOperationDescriptor(asRequest(this.#paginationQuery), variables);
    this.#retained.push(this.#environment.retain(operation));
    return this.data();
  }

  /** Releases the retained pages (as unmounting the component does). */
  dispose(): void {
    for (const retained of this.#retained) retained.dispose();
    this.#retained = [];
  }
}

/**
 * Refetches one object through `node(id:)` with the query relay-compiler generated for its
 * `@refetchable` fragment, as `useRefetchableFragment`'s `refetch` does, and reads the fragment's
 * data from the store; null when `node` answered null (unknown id, or not the caller's).
 */
export async function refetchNode<Data>(
  environment: Environment,
  refetchQuery: GraphQLTaggedNode,
  fragment: ReaderFragment,
  id: string,
): Promise<Data | null> {
  const variables = { id };
  await fetchQuery(environment, refetchQuery, variables).toPromise();
  const operation = createOperationDescriptor(asRequest(refetchQuery), variables);
  const root = environment.lookup(operation.fragment).data as { node?: unknown } | null;
  if (!root?.node) return null;
  return environment.lookup(getSelector(fragment, root.node) as SingularReaderSelector).data as Data;
}

/** The concrete request of an imported artifact (`import query from './__generated__/…graphql.ts'`). */
function asRequest(node: GraphQLTaggedNode): Parameters<typeof createOperationDescriptor>[0] {
  return node as Parameters<typeof createOperationDescriptor>[0];
}
