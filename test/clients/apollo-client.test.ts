import { createHash } from 'node:crypto';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import type { DocumentNode } from 'graphql';
import { createClient } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  AccountUpdaterCardByIdDocument,
  EnrolCardWithWebhookDocument,
  LiveCardEventsDocument,
  MeDocument,
  possibleTypes,
} from '../../src/client/generated/index.ts';
import { useStack, waitForSubscribers } from '../support/fixtures.ts';

/** One HTTP exchange as the client's fetch saw it. */
type Exchange = { method: string; body: Record<string, unknown> | null; url: string; response: unknown };

/** A fetch that records each request's GraphQL parameters and its JSON answer. */
function recordingFetch(log: Exchange[]): typeof fetch {
  return async (input, init) => {
    const url = String(input);
    const response = await fetch(input, init);
    const answer = await response.clone().json();
    log.push({
      method: init?.method ?? 'GET',
      url,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : null,
      response: answer,
    });
    return response;
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('Apollo Client 4 with the generated documents', () => {
  const t = useStack();

  function apollo(
    options: { possibleTypes?: Record<string, string[]>; link?: ApolloLink; log?: Exchange[] } = {},
  ) {
    const http = new HttpLink({
      uri: `${t.stack.url}/graphql`,
      headers: { authorization: `Bearer ${t.vault1Token}` },
      ...(options.log ? { fetch: recordingFetch(options.log) } : {}),
    });
    const ws = new GraphQLWsLink(
      createClient({
        url: `${t.stack.url.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${t.vault1Token}` },
        retryAttempts: 0,
      }),
    );
    const link = ApolloLink.split(
      ({ query }) => {
        const definition = getMainDefinition(query);
        return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
      },
      ws,
      options.link ? options.link.concat(http) : http,
    );
    return new ApolloClient({
      link,
      cache: new InMemoryCache(options.possibleTypes ? { possibleTypes: options.possibleTypes } : {}),
    });
  }

  it('receives code and message of a typed error through `... on Error` with the generated possibleTypes', async () => {
    const client = apollo({ possibleTypes });
    const { data } = await client.query({
      query: AccountUpdaterCardByIdDocument,
      variables: { cardId: 'CRD0000000000000000000000' },
    });
    expect(data?.accountUpdaterCard).toEqual({
      __typename: 'CardNotFoundError',
      code: 'card-not-found',
      message: 'Card CRD0000000000000000000000 was not found in this vault',
    });
  });

  it('without possibleTypes Apollo drops the interface fragment (why the codegen emits them)', async () => {
    const client = apollo();
    const { data } = await client.query({
      query: AccountUpdaterCardByIdDocument,
      variables: { cardId: 'CRD0000000000000000000000' },
    });
    expect(data?.accountUpdaterCard).not.toHaveProperty('code');
  });

  it('receives a live au_card.* event over graphql-ws after an enrolment', async () => {
    const client = apollo({ possibleTypes });
    const events: unknown[] = [];
    const subscription = client
      .subscribe({ query: LiveCardEventsDocument })
      .subscribe({ next: (result) => events.push(result.data?.cardEvents) });
    try {
      await waitForSubscribers(t.stack.app, 'tntsandbox1', 1);
      const { data } = await client.mutate({
        mutation: EnrolCardWithWebhookDocument,
        variables: { number: '5100260000895001' },
      });
      const enrolled = data?.enrollAccountUpdaterCard;
      expect(enrolled?.__typename).toBe('MutationEnrollAccountUpdaterCardSuccess');
      const cardId =
        enrolled?.__typename === 'MutationEnrollAccountUpdaterCardSuccess' ? enrolled.data.cardId : '';
      await expect
        .poll(() => events, { timeout: 5_000 })
        .toContainEqual(expect.objectContaining({ type: 'ENROLLED', cardId, tenant: 'tntsandbox1' }));
      // The normal (not mock) card reads back.
      const { data: read } = await client.query({
        query: AccountUpdaterCardByIdDocument,
        variables: { cardId },
      });
      expect(read?.accountUpdaterCard?.__typename).toBe('QueryAccountUpdaterCardSuccess');
    } finally {
      subscription.unsubscribe();
    }
  });

  it.each([
    ['POST', false],
    ['GET', true],
  ])(
    'PersistedQueryLink (%s): hash miss, retry with the query stores it, then the hash alone runs',
    async (method, useGET) => {
      const first: Exchange[] = [];
      const apqLink = () => new PersistedQueryLink({ sha256, useGETForHashedQueries: useGET });
      const client = apollo({ possibleTypes, link: apqLink(), log: first });
      const operation = useGET ? MeDocument : AccountUpdaterCardByIdDocument;
      const variables = useGET ? {} : { cardId: `CRD${`apq${method}`.padEnd(22, '0')}` };
      const result = await client.query({ query: operation as DocumentNode, variables });
      expect(result.error).toBeUndefined();

      // 1. The hash alone missed: Apollo's protocol error. 2. The retry carried the query and succeeded.
      expect(first).toHaveLength(2);
      expect(first[0]!.method).toBe(method);
      const firstQuery = first[0]!.body?.query ?? new URL(first[0]!.url).searchParams.get('query');
      expect(firstQuery).toBeFalsy();
      expect(first[0]!.response).toMatchObject({
        errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }],
      });
      expect(first[1]!.method).toBe('POST');
      expect(typeof first[1]!.body?.query).toBe('string');
      expect(first[1]!.response).toHaveProperty('data');

      // A second app (fresh cache and link) sends only the hash, and the gateway knows it now.
      const second: Exchange[] = [];
      const again = apollo({ possibleTypes, link: apqLink(), log: second });
      const repeated = await again.query({ query: operation as DocumentNode, variables });
      expect(repeated.error).toBeUndefined();
      expect(second).toHaveLength(1);
      expect(second[0]!.body?.query ?? new URL(second[0]!.url).searchParams.get('query')).toBeFalsy();
      expect(repeated.data).toEqual(result.data);
    },
  );
});
