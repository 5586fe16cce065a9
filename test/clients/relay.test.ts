import { describe, expect, it } from 'vitest';
import CardEventDetailsFragment, {
  type CardEventDetails_event$data,
} from '../../examples/relay/src/__generated__/CardEventDetails_event.graphql.ts';
import CardEventDetailsRefetchQuery from '../../examples/relay/src/__generated__/CardEventDetailsRefetchQuery.graphql.ts';
import CardEventHistoryFragment, {
  type CardEventHistory_query$data,
} from '../../examples/relay/src/__generated__/CardEventHistory_query.graphql.ts';
import CardEventHistoryPaginationQuery from '../../examples/relay/src/__generated__/CardEventHistoryPaginationQuery.graphql.ts';
import CardEventHistoryQuery from '../../examples/relay/src/__generated__/CardEventHistoryQuery.graphql.ts';
import OrganizationMembersFragment, {
  type OrganizationMembers_query$data,
} from '../../examples/relay/src/__generated__/OrganizationMembers_query.graphql.ts';
import OrganizationMembersPaginationQuery from '../../examples/relay/src/__generated__/OrganizationMembersPaginationQuery.graphql.ts';
import OrganizationMembersQuery from '../../examples/relay/src/__generated__/OrganizationMembersQuery.graphql.ts';
import { createCardgraphEnvironment, PaginatedList, refetchNode } from '../../examples/relay/src/client.ts';
import {
  notification,
  postNotification,
  randomCardId,
  SANDBOX_OWNER,
  useStack,
} from '../support/fixtures.ts';

/**
 * The Relay example (examples/relay, compiled by relay-compiler in the test command) against a real
 * gateway: Relay's connection handler merges the pages `loadNext` fetches into one connection in
 * the store, and `node(id:)` refetches a card event.
 */
describe('Relay (relay-compiler and relay-runtime) on the paged lists', () => {
  const t = useStack();

  /** Posts five card notifications of a new card, one second apart; returns their ids, oldest first. */
  async function fiveEvents(): Promise<{ cardId: string; ids: string[] }> {
    const cardId = randomCardId();
    const ids: string[] = [];
    for (let second = 1; second <= 5; second++) {
      const body = notification({ cardId, timestamp: `2026-11-21T05:01:0${second}.000Z` });
      const answer = await postNotification(t.stack.url, body);
      expect(answer).toEqual({ status: 200, body: { data: { id: body.id, status: 'accepted' } } });
      ids.push(body.id);
    }
    return { cardId, ids };
  }

  it('pages cardEventHistory two at a time: each page merged in order, no duplicate, until hasNextPage is false', async () => {
    const { cardId, ids } = await fiveEvents();
    const list = new PaginatedList<CardEventHistory_query$data, { node: { id: string } }>({
      environment: createCardgraphEnvironment(`${t.stack.url}/graphql`, t.vault1Token),
      query: CardEventHistoryQuery,
      fragment: CardEventHistoryFragment,
      paginationQuery: CardEventHistoryPaginationQuery,
      variables: { cardId, count: 2 },
      connectionOf: (data) => data.cardEventHistory,
    });
    const idsOf = (data: CardEventHistory_query$data) =>
      data.cardEventHistory?.edges?.map((edge) => edge?.node?.id);

    expect(idsOf(await list.load())).toEqual(ids.slice(0, 2));
    expect(list.hasNext()).toBe(true);
    expect(idsOf(await list.loadNext(2))).toEqual(ids.slice(0, 4));
    expect(list.hasNext()).toBe(true);
    const all = await list.loadNext(2);
    expect(idsOf(all)).toEqual(ids);
    expect(list.hasNext()).toBe(false);
    expect(all.cardEventHistory?.edges?.[4]?.node).toMatchObject({ id: ids[4], type: 'UPDATED', cardId });
    list.dispose();
  });

  it('refetches a card event by its id through node(id:)', async () => {
    const { ids } = await fiveEvents();
    const environment = createCardgraphEnvironment(`${t.stack.url}/graphql`, t.vault1Token);
    const event = await refetchNode<CardEventDetails_event$data>(
      environment,
      CardEventDetailsRefetchQuery,
      CardEventDetailsFragment,
      ids[2]!,
    );
    expect(event).toMatchObject({
      id: ids[2],
      type: 'UPDATED',
      source: 'ACCOUNT_UPDATER',
      outOfOrder: false,
    });
    const unknown = await refetchNode(
      environment,
      CardEventDetailsRefetchQuery,
      CardEventDetailsFragment,
      '00000000-0000-4000-8000-000000000000',
    );
    expect(unknown).toBeNull();
  });

  it('pages organizationMembers three at a time through every member, the owner first', async () => {
    const list = new PaginatedList<OrganizationMembers_query$data, { node: { id: string } }>({
      environment: createCardgraphEnvironment(`${t.stack.url}/graphql`, t.vault1Token),
      query: OrganizationMembersQuery,
      fragment: OrganizationMembersFragment,
      paginationQuery: OrganizationMembersPaginationQuery,
      variables: { organizationId: 'ACsandbox000000000000001', count: 3 },
      connectionOf: (data) => data.organizationMembers,
    });
    const idsOf = (data: OrganizationMembers_query$data) =>
      data.organizationMembers?.edges?.map((edge) => edge?.node?.id);
    const members = Array.from({ length: 8 }, (_, i) => `USsandbox00000000000000${i + 1}`);

    const first = await list.load();
    expect(idsOf(first)).toEqual(members.slice(0, 3));
    expect(first.organizationMembers?.edges?.[0]?.node).toEqual({
      __typename: 'OrganizationMember',
      id: SANDBOX_OWNER.id,
      name: SANDBOX_OWNER.name,
      role: SANDBOX_OWNER.role,
    });
    expect(idsOf(await list.loadNext(3))).toEqual(members.slice(0, 6));
    expect(idsOf(await list.loadNext(3))).toEqual(members);
    expect(list.hasNext()).toBe(false);
    list.dispose();
  });
});
