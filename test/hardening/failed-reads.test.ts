import { type ExecutionResult, print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../generated/index.ts';
import { type Stack, startStack } from '../support/fixtures.ts';
import { openSse, readEvents } from '../support/sse.ts';

/**
 * Issue 10, class 7 ("one failed read nulls a whole list"): with the upstream down, `nodes(ids:)`
 * answers one null entry per id, with an error at that entry's path for each read that failed, over
 * HTTP, SSE and graphql-ws alike, instead of `null` for the whole list.
 */

const VAULT1 = 'tntsandbox1';
const VAULT2 = 'tntsandbox2';

const NodesOfCards = graphql(`
  query HD_FR_Nodes($ids: [ID!]!) {
    nodes(ids: $ids) { __typename id ... on AccountUpdaterCard { cardId state } ... on Card { cardId } }
  }
`);

/** A Relay global ID as Pothos encodes it: base64 of `<Type>:<vault>:<card id>`. */
const globalId = (type: string, vault: string, cardId: string) =>
  Buffer.from(`${type}:${vault}:${cardId}`).toString('base64');

describe('nodes with the upstream down', () => {
  let stack: Stack;
  let token: string;
  const ids = [
    globalId('AccountUpdaterCard', VAULT1, 'CRDaaaaaaaaaaaaaaaaaaaaaa'),
    globalId('Card', VAULT1, 'CRDbbbbbbbbbbbbbbbbbbbbbb'),
    // Another vault's card: null without any read, so without an error.
    globalId('Card', VAULT2, 'CRDcccccccccccccccccccccc'),
  ];

  /** The answer both transports must give: a null per entry, an error per failed read. */
  function expectPerEntryNulls(result: ExecutionResult<{ nodes: unknown[] | null }>) {
    expect(result.data).toEqual({ nodes: [null, null, null] });
    const errors = (result.errors ?? []).map((error) => ({
      path: error.path,
      code: error.extensions?.code,
    }));
    expect(errors.sort((a, b) => String(a.path).localeCompare(String(b.path)))).toEqual([
      { path: ['nodes', 0], code: 'connection-failed' },
      { path: ['nodes', 1], code: 'connection-failed' },
    ]);
  }

  beforeAll(async () => {
    stack = await startStack();
    token = await stack.token({ vaults: [VAULT1] });
    // The sandbox stops listening: every upstream call (token endpoint included) is refused.
    await stack.sandbox!.stop();
  });
  afterAll(() => stack.stop());

  it('over HTTP: one null entry and one error (with its path) per unreadable id', async () => {
    const result = await stack.execute(NodesOfCards, { ids }, token);
    expect(result.status).toBe(200);
    expectPerEntryNulls(result as ExecutionResult<{ nodes: unknown[] | null }>);
  });

  it('over graphql-ws: the same per-entry answer', async () => {
    const client = stack.wsClient(token);
    const results: ExecutionResult<{ nodes: unknown[] | null }>[] = [];
    await new Promise<void>((resolve, reject) => {
      client.subscribe<{ nodes: unknown[] | null }>(
        { query: print(NodesOfCards), variables: { ids } },
        { next: (result) => results.push(result as never), error: reject, complete: resolve },
      );
    });
    expect(results).toHaveLength(1);
    expectPerEntryNulls(results[0]!);
  });

  it('over SSE (Accept: text/event-stream): the same per-entry answer', async () => {
    const stream = await openSse(stack.url, { query: print(NodesOfCards), variables: { ids } }, token);
    expect(stream.status).toBe(200);
    const data = (await readEvents(stream)).filter((event) => event.event === 'next');
    expect(data).toHaveLength(1);
    expectPerEntryNulls(JSON.parse(data[0]!.data) as ExecutionResult<{ nodes: unknown[] | null }>);
  });
});
