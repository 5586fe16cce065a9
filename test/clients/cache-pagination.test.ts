import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
import { Client, fetchExchange } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { relayPagination } from '@urql/exchange-graphcache/extras';
import { describe, expect, it } from 'vitest';
import { urqlSchema } from '../../src/client/generated/index.ts';
import { graphql } from '../generated/index.ts';
import {
  networkTokenNotification,
  notification,
  postGraphql,
  postNotification,
  randomCardId,
  useStack,
} from '../support/fixtures.ts';

/**
 * The history fields that return their connection directly, paged by the cache helpers of Apollo
 * Client (`relayStylePagination` with `fetchMore`) and urql graphcache (`relayPagination`), which
 * expect the connection at the paged field; and their errors, a null field with the code in
 * `errors[].extensions.code`.
 */

const CardEventPage = graphql(`
  query CP_CardEventPage($cardId: String, $first: Int, $after: String) {
    cardEventHistory(cardId: $cardId, first: $first, after: $after) {
      edges { cursor node { id type cardId } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

const NetworkTokenEventPage = graphql(`
  query CP_NetworkTokenEventPage($panAlias: String, $first: Int, $after: String) {
    networkTokenEventHistory(panAlias: $panAlias, first: $first, after: $after) {
      edges { cursor node { id panAlias state } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

const OrganizationMemberPage = graphql(`
  query CP_OrganizationMemberPage($organizationId: String!, $first: Int, $after: String) {
    organizationMembers(organizationId: $organizationId, first: $first, after: $after) {
      edges { cursor node { id role } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

const UnmappedPage = graphql(`
  query CP_UnmappedPage($first: Int, $after: String) {
    unmappedNotificationHistory(first: $first, after: $after) {
      edges { node { id reason vaultId } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

const SANDBOX_ORGANIZATION = 'ACsandbox000000000000001';
const SANDBOX_MEMBER_IDS = Array.from({ length: 8 }, (_, i) => `USsandbox00000000000000${i + 1}`);

describe('history connections at the paged field', () => {
  const t = useStack();

  /** Posts `count` card notifications of a new card, one second apart; their ids, oldest first. */
  async function cardEvents(count: number): Promise<{ cardId: string; ids: string[] }> {
    const cardId = randomCardId();
    const ids: string[] = [];
    for (let second = 1; second <= count; second++) {
      const body = notification({ cardId, timestamp: `2026-11-21T06:00:0${second}.000Z` });
      expect((await postNotification(t.stack.url, body)).status).toBe(200);
      ids.push(body.id);
    }
    return { cardId, ids };
  }

  it('Apollo Client: relayStylePagination merges fetchMore pages of cardEventHistory in order, without duplicates', async () => {
    const { cardId, ids } = await cardEvents(5);
    const client = new ApolloClient({
      link: new HttpLink({
        uri: `${t.stack.url}/graphql`,
        headers: { authorization: `Bearer ${t.vault1Token}` },
      }),
      cache: new InMemoryCache({
        typePolicies: {
          Query: { fields: { cardEventHistory: relayStylePagination(['cardId', 'types', 'vaultId']) } },
        },
      }),
    });
    const idsOf = (
      data: { cardEventHistory?: { edges?: ({ node?: { id?: string } } | undefined)[] } | null } | undefined,
    ) => data?.cardEventHistory?.edges?.map((edge) => edge?.node?.id);

    // A list screen: a watched query, and fetchMore after the last cursor for each further page.
    const watched = client.watchQuery({ query: CardEventPage, variables: { cardId, first: 2 } });
    const seen: (string | undefined)[][] = [];
    const subscription = watched.subscribe((result) => {
      const page = idsOf(result.data);
      if (page) seen.push(page);
    });
    await expect.poll(() => seen.at(-1)).toEqual(ids.slice(0, 2));
    const endCursor = () => watched.getCurrentResult().data?.cardEventHistory?.pageInfo?.endCursor;
    await watched.fetchMore({ variables: { after: endCursor() } });
    await expect.poll(() => seen.at(-1)).toEqual(ids.slice(0, 4));
    await watched.fetchMore({ variables: { after: endCursor() } });
    await expect.poll(() => seen.at(-1)).toEqual(ids);
    expect(watched.getCurrentResult().data?.cardEventHistory?.pageInfo).toEqual({
      __typename: 'PageInfo',
      hasNextPage: false,
      endCursor: expect.any(String),
    });
    subscription.unsubscribe();
  });

  it('urql graphcache: relayPagination merges pages of networkTokenEventHistory and organizationMembers in order', async () => {
    // Base 36: a 13-digit Date.now() is Luhn-valid one time in ten, and the receiver masks such a run.
    const panAlias = `tok_sandbox_Pagination${Date.now().toString(36)}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const body = networkTokenNotification({
        panAlias,
        occurredAtMs: Date.parse('2026-11-21T07:00:00Z') + i * 1_000,
      });
      expect((await postNotification(t.stack.url, body)).status).toBe(200);
      ids.push(body.id);
    }
    const client = new Client({
      url: `${t.stack.url}/graphql`,
      fetchOptions: { headers: { authorization: `Bearer ${t.vault1Token}` } },
      exchanges: [
        cacheExchange({
          schema: urqlSchema,
          resolvers: {
            Query: { networkTokenEventHistory: relayPagination(), organizationMembers: relayPagination() },
          },
          keys: {
            NetworkTokenEventConnection: () => null,
            NetworkTokenEventEdge: () => null,
            OrganizationMemberConnection: () => null,
            OrganizationMemberEdge: () => null,
            PageInfo: () => null,
          },
        }),
        fetchExchange,
      ],
    });

    const page1 = await client.query(NetworkTokenEventPage, { panAlias, first: 2 }).toPromise();
    expect(page1.error).toBeUndefined();
    expect(page1.data?.networkTokenEventHistory?.edges.map((edge) => edge.node.id)).toEqual(ids.slice(0, 2));
    const after = page1.data?.networkTokenEventHistory?.pageInfo.endCursor;
    const merged = await client.query(NetworkTokenEventPage, { panAlias, first: 2, after }).toPromise();
    expect(merged.data?.networkTokenEventHistory?.edges.map((edge) => edge.node.id)).toEqual(ids);
    expect(merged.data?.networkTokenEventHistory?.pageInfo.hasNextPage).toBe(false);

    const members1 = await client
      .query(OrganizationMemberPage, { organizationId: SANDBOX_ORGANIZATION, first: 5 })
      .toPromise();
    expect(members1.data?.organizationMembers?.edges.map((edge) => edge.node.id)).toEqual(
      SANDBOX_MEMBER_IDS.slice(0, 5),
    );
    const members = await client
      .query(OrganizationMemberPage, {
        organizationId: SANDBOX_ORGANIZATION,
        first: 5,
        after: members1.data?.organizationMembers?.pageInfo.endCursor,
      })
      .toPromise();
    expect(members.data?.organizationMembers?.edges.map((edge) => edge.node.id)).toEqual(SANDBOX_MEMBER_IDS);
  });

  it('urql graphcache: relayPagination merges pages of unmappedNotificationHistory for an operator', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const body = notification({ tenant: 'short', timestamp: `2026-11-21T08:00:0${i}.000Z` });
      const answer = await postNotification(t.stack.url, body);
      expect(answer).toEqual({ status: 200, body: { data: { id: body.id, status: 'unmapped' } } });
      ids.push(body.id);
    }
    // Notifications naming no vault are listed only to an operator of the whole gateway: a token
    // naming every vault it serves (both sandbox vaults).
    const operator = await t.stack.token({
      vaults: ['tntsandbox1', 'tntsandbox2'],
      scopes: ['operator:read'],
    });
    const client = new Client({
      url: `${t.stack.url}/graphql`,
      fetchOptions: { headers: { authorization: `Bearer ${operator}` } },
      exchanges: [
        cacheExchange({
          schema: urqlSchema,
          resolvers: { Query: { unmappedNotificationHistory: relayPagination() } },
          keys: {
            UnmappedNotificationConnection: () => null,
            UnmappedNotificationEdge: () => null,
            PageInfo: () => null,
          },
        }),
        fetchExchange,
      ],
    });
    const page1 = await client.query(UnmappedPage, { first: 2 }).toPromise();
    expect(page1.error).toBeUndefined();
    const after = page1.data?.unmappedNotificationHistory?.pageInfo.endCursor;
    const merged = await client.query(UnmappedPage, { first: 2, after }).toPromise();
    expect(merged.data?.unmappedNotificationHistory?.edges.map((edge) => edge.node)).toEqual(
      ids.map((id) => ({ id, reason: 'NO_TENANT', vaultId: null })),
    );
    expect(merged.data?.unmappedNotificationHistory?.pageInfo.hasNextPage).toBe(false);
  });

  it('fails a history field alone: null, with the code a client switches on in errors[].extensions', async () => {
    const query = `query CP_Errors($after: String, $organizationId: String!) {
      cardEventHistory(after: $after) { edges { cursor } }
      organizationMembers(organizationId: $organizationId) { edges { cursor } }
      viewer { subject }
    }`;
    const answer = await postGraphql(
      t.stack.url,
      { query, variables: { after: 'not-a-cursor', organizationId: 'ACsandbox000000000009999' } },
      t.vault1Token,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({
      cardEventHistory: null,
      organizationMembers: null,
      viewer: { subject: expect.any(String) },
    });
    const errors = (answer.body.errors ?? []) as { path?: string[]; extensions?: { code?: string } }[];
    const codes = errors.map((error) => [error.path, error.extensions?.code]);
    expect(codes).toEqual(
      expect.arrayContaining([
        [['cardEventHistory'], 'invalid-input'],
        [['organizationMembers'], 'not-found'],
      ]),
    );
    expect(codes).toHaveLength(2);

    const anonymous = await postGraphql(
      t.stack.url,
      { query: 'query CP_Anonymous { cardEventHistory { edges { cursor } } }' },
      null,
    );
    expect(anonymous.body.data).toEqual({ cardEventHistory: null });
    expect(anonymous.body.errors?.map((error) => error.extensions?.code)).toEqual(['unauthenticated']);
  });
});
