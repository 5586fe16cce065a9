import { describe, expect, it } from 'vitest';
import { graphql } from '../generated/index.ts';
import { networkTokenNotification, notification, postNotification, useStack } from '../support/fixtures.ts';

const EventNodes = graphql(`
  query EN_EventNodes($ids: [ID!]!) {
    nodes(ids: $ids) {
      __typename
      id
      ... on CardEvent { type cardId }
      ... on NetworkTokenEvent { panAlias state }
    }
  }
`);

const EventNode = graphql(`
  query EN_EventNode($id: ID!) {
    node(id: $id) { __typename id }
  }
`);

describe('card and network token events by node(id:) and nodes(ids:)', () => {
  const t = useStack();

  it("reads each event back by its notification id, within the caller's vaults and scopes", async () => {
    const cardEvent = notification({ cardId: 'CRDnodeTest0000000000000' });
    const tokenEvent = networkTokenNotification({ panAlias: 'tok_sandbox_NodeTestAlias0001' });
    for (const body of [cardEvent, tokenEvent])
      expect((await postNotification(t.stack.url, body)).status).toBe(200);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const ids = [cardEvent.id, tokenEvent.id, unknown];

    const read = await t.stack.execute(EventNodes, { ids }, t.vault1Token);
    expect(read.errors).toBeUndefined();
    expect(read.data?.nodes).toEqual([
      { __typename: 'CardEvent', id: cardEvent.id, type: 'UPDATED', cardId: 'CRDnodeTest0000000000000' },
      {
        __typename: 'NetworkTokenEvent',
        id: tokenEvent.id,
        panAlias: 'tok_sandbox_NodeTestAlias0001',
        state: 'ACTIVE',
      },
      null,
    ]);
    expect((await t.stack.execute(EventNode, { id: cardEvent.id }, t.vault1Token)).data?.node).toEqual({
      __typename: 'CardEvent',
      id: cardEvent.id,
    });

    // Another vault's token, and a token without the network token scope, read null, never the event.
    const otherVault = await t.stack.execute(EventNodes, { ids }, t.vault2Token);
    expect(otherVault.data?.nodes).toEqual([null, null, null]);
    const cardsOnly = await t.stack.token({ scopes: ['cards:read'] });
    const scoped = await t.stack.execute(EventNodes, { ids }, cardsOnly);
    expect(scoped.data?.nodes).toEqual([
      { __typename: 'CardEvent', id: cardEvent.id, type: 'UPDATED', cardId: 'CRDnodeTest0000000000000' },
      null,
      null,
    ]);
  });
});
