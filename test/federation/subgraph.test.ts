import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { execute, type GraphQLFormattedError, parse } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { CreateCard, EnrolCard } from '../support/documents.ts';
import { cardgraphSubgraphSdl } from '../support/federation.ts';
import {
  BULK_BIN_BRANDS,
  BULK_TEST_PANS,
  member,
  notification,
  postGraphql,
  postNotification,
  sandboxRequestsDuring,
  testToken,
  useStack,
} from '../support/fixtures.ts';

/**
 * Subgraph mode (issue 22 item 1, `FEDERATION=on`) over real HTTP against the embedded sandbox:
 * `_service { sdl }` with `@link` and the four `@key`s, `_entities` through the request's loaders
 * and the card read cache (one read per distinct card, a second request served from the cache),
 * vault scoping (a card of another vault, or none, is null) and the root fields' scope errors.
 * The documents are plain strings: `_service` and `_entities` are not in schema.graphql (the
 * standalone schema the codegen reads).
 */

const ENTITIES = `
  query Entities($representations: [_Any!]!) {
    _entities(representations: $representations) {
      __typename
      ... on Card { cardId vaultId bin last4 attributes { bin brand } }
      ... on AccountUpdaterCard { cardId vaultId state }
      ... on NetworkToken { panAlias tokenState: state }
      ... on CardEvent { id tenant type eventCardId: cardId }
    }
  }
`;

const CARD_PATH = '/card-interface/cards/';
const ATTRIBUTES_PATH = '/card-attributes/attributes/attributes';

describe('FEDERATION=on: cardgraph as a Federation v2 subgraph', () => {
  const t = useStack({ FEDERATION: 'on' });

  const withRequests = <T>(work: () => Promise<T>) => sandboxRequestsDuring(t.stack, work);

  const entities = async (representations: unknown[], token: string | null) => {
    const answer = await postGraphql(t.stack.url, { query: ENTITIES, variables: { representations } }, token);
    // Errors of `_entities` carry the path of their representation.
    return answer as { status: number; body: { data?: unknown; errors?: GraphQLFormattedError[] } };
  };

  /** Creates a card interface card of `pan` (expiry 12/30) in `vaultId`'s vault and returns its id. */
  async function createCard(pan: string, token: string, vaultId?: string) {
    const created = await t.stack.execute(
      CreateCard,
      { input: { pan, expMonth: 12, expYear: 30 }, ...(vaultId ? { vaultId } : {}) },
      token,
    );
    return member(created.data?.createCard, 'MutationCreateCardSuccess').data.cardId;
  }

  it('publishes its SDL with @link and the entity keys in _service { sdl }', async () => {
    const answer = await postGraphql(t.stack.url, { query: '{ _service { sdl } }' }, null);
    expect(answer.status).toBe(200);
    const sdl = (answer.body.data as { _service: { sdl: string } })._service.sdl;
    expect(sdl).toContain(
      'schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"]) {',
    );
    expect(sdl.split('\n').filter((line) => line.includes('@key('))).toEqual([
      'type AccountUpdaterCard implements Node @key(fields: "cardId") {',
      'type Card implements Node @key(fields: "cardId") {',
      'type CardEvent @key(fields: "id") {',
      'type NetworkToken @key(fields: "panAlias") {',
    ]);
    // The machinery is the router's, not part of the published SDL.
    expect(sdl).not.toContain('_entities');
    expect(sdl).not.toContain('_Service');
  });

  describe('_entities', () => {
    let cardIds: string[];
    let otherVaultCardId: string;

    beforeAll(async () => {
      cardIds = [];
      // One at a time: the order of the ids is the order of BULK_TEST_PANS.
      for (const pan of BULK_TEST_PANS) cardIds.push(await createCard(pan, t.vault1Token));
      otherVaultCardId = await createCard('4111111111111111', t.vault2Token);
    });

    it('reads 25 Card references in order, each card once, through the card read cache', async () => {
      // Reverse order: the answer follows the representations, not the creation order.
      const order = [...cardIds.keys()].reverse();
      const representations = order.map((index) => ({ __typename: 'Card', cardId: cardIds[index] }));
      // Creating a card does not fill the read cache: this first request reads every card once.
      const first = await withRequests(() => entities(representations, t.vault1Token));
      expect(first.result.body.errors).toBeUndefined();
      expect(first.result.body.data).toEqual({
        _entities: order.map((index) => {
          const pan = BULK_TEST_PANS[index]!;
          return {
            __typename: 'Card',
            cardId: cardIds[index],
            vaultId: 'tntsandbox1',
            bin: pan.slice(0, 6),
            last4: pan.slice(-4),
            attributes: { bin: pan.slice(0, 6), brand: BULK_BIN_BRANDS[pan.slice(0, 6)] },
          };
        }),
      });
      const cardReads = first.requests.filter((r) => r.method === 'GET' && r.path.startsWith(CARD_PATH));
      expect(cardReads.map((r) => r.path).sort()).toEqual(cardIds.map((id) => `${CARD_PATH}${id}`).sort());
      expect(cardReads.every((r) => r.vault === 'tntsandbox1')).toBe(true);
      // Card attributes: one lookup per distinct BIN (five), however many cards share it.
      expect(first.requests.filter((r) => r.method === 'POST' && r.path === ATTRIBUTES_PATH)).toHaveLength(5);
      expect(first.requests).toHaveLength(25 + 5);

      // The same references again: every card from the app-wide read cache, every BIN from the BIN cache.
      const second = await withRequests(() => entities(representations, t.vault1Token));
      expect(second.result.body).toEqual(first.result.body);
      expect(second.requests).toEqual([]);
    });

    it('resolves a variable inside an _Any literal as graphql-js does (the document runs without graphql-jit)', async () => {
      const query = `query Literal($c: String!) {
        _entities(representations: [{ __typename: "Card", cardId: $c }]) { ... on Card { cardId last4 } }
      }`;
      const before = await t.stack.app.metrics.registry.getSingleMetricAsString(
        'cardgraph_jit_fallbacks_total',
      );
      const answer = await postGraphql(t.stack.url, { query, variables: { c: cardIds[0] } }, t.vault1Token);
      expect(answer.body).toEqual({
        data: { _entities: [{ cardId: cardIds[0], last4: BULK_TEST_PANS[0]!.slice(-4) }] },
      });
      // Not compiled at all: no compiled run answered null and fell back.
      expect(
        await t.stack.app.metrics.registry.getSingleMetricAsString('cardgraph_jit_fallbacks_total'),
      ).toBe(before);
    });

    it('reads a card referenced twice in one request once', async () => {
      const representations = [cardIds[0], cardIds[1], cardIds[0]].map((cardId) => ({
        __typename: 'AccountUpdaterCard',
        cardId,
      }));
      const { result, requests } = await withRequests(() => entities(representations, t.vault1Token));
      // Card interface ids are not account updater cards: each is null, read once.
      expect(result.body).toEqual({ data: { _entities: [null, null, null] } });
      expect(requests.map((r) => r.path).sort()).toEqual(
        [`/account-updater/cards/${cardIds[0]}`, `/account-updater/cards/${cardIds[1]}`].sort(),
      );
    });

    it("resolves another vault's card, an unknown card and a malformed key to null, never to data", async () => {
      const { result, requests } = await withRequests(() =>
        entities(
          [
            { __typename: 'Card', cardId: otherVaultCardId },
            { __typename: 'Card', cardId: cardIds[3] },
            { __typename: 'Card', cardId: 'CRDdoesnotexist000000000' },
            { __typename: 'Card', cardId: '../accounts' },
            { __typename: 'NetworkToken', panAlias: 'tok_sandbox_notprovisioned000' },
            // A card number where a key belongs: null, never sent upstream nor logged (stop() checks the log).
            { __typename: 'NetworkToken', panAlias: '4111111111111111' },
            { __typename: 'Card', cardId: '4111111111111111' },
          ],
          t.vault1Token,
        ),
      );
      expect(result.body.errors).toBeUndefined();
      const answered = (result.body.data as { _entities: ({ cardId?: string } | null)[] })._entities;
      expect(answered.map((entity) => entity?.cardId ?? null)).toEqual([
        null,
        cardIds[3],
        null,
        null,
        null,
        null,
        null,
      ]);
      // Read in the token's vault only; the malformed key is never sent upstream.
      expect(requests.every((r) => r.vault === 'tntsandbox1')).toBe(true);
      expect(requests.some((r) => r.path.includes('..') || r.path.includes('4111111111111111'))).toBe(false);
      expect(JSON.stringify(result.body)).not.toContain('4111111111111111');

      // The owner of the other vault reads it.
      const owner = await entities([{ __typename: 'Card', cardId: otherVaultCardId }], t.vault2Token);
      expect(owner.body.data).toMatchObject({
        _entities: [{ __typename: 'Card', cardId: otherVaultCardId, vaultId: 'tntsandbox2' }],
      });
    });

    it('resolves an AccountUpdaterCard reference like the accountUpdaterCard root field', async () => {
      const enrolled = await t.stack.execute(
        EnrolCard,
        { input: { name: 'Ada Lovelace', number: '5100260000895001', expMonth: 12, expYear: 30 } },
        t.vault1Token,
      );
      const card = member(
        enrolled.data?.enrollAccountUpdaterCard,
        'MutationEnrollAccountUpdaterCardSuccess',
      ).data;
      const answer = await entities(
        [{ __typename: 'AccountUpdaterCard', cardId: card.cardId }],
        t.vault1Token,
      );
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data).toEqual({
        _entities: [
          {
            __typename: 'AccountUpdaterCard',
            cardId: card.cardId,
            vaultId: 'tntsandbox1',
            state: expect.stringMatching(/^(ENROLLING|ENROLLED)$/),
          },
        ],
      });
    });

    it('fails each reference with the root field error when the token lacks the scope or is absent', async () => {
      const noScope = await testToken({ scopes: ['card-attributes:basic'] });
      const rootField = await postGraphql(
        t.stack.url,
        { query: `{ card(cardId: "${cardIds[0]}") { __typename ... on Error { code message } } }` },
        noScope,
      );
      const forbidden = (rootField.body.data as { card: { code: string; message: string } }).card;
      expect(forbidden.code).toBe('forbidden');

      const representations = [cardIds[0], cardIds[1]].map((cardId) => ({ __typename: 'Card', cardId }));
      const { result, requests } = await withRequests(() => entities(representations, noScope));
      expect(result.body.data).toEqual({ _entities: [null, null] });
      expect(result.body.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([
        [['_entities', 0], 'forbidden'],
        [['_entities', 1], 'forbidden'],
      ]);
      expect(forbidden.message).toBe('Not authorized: Not authorized to resolve Query.card');
      expect(result.body.errors?.map((e) => e.message)).toEqual([
        'Not authorized: Not authorized to resolve Query._entities',
        'Not authorized: Not authorized to resolve Query._entities',
      ]);
      expect(requests).toEqual([]);

      const anonymous = await entities(representations.slice(0, 1), null);
      expect(anonymous.body.errors?.map((e) => [e.path, e.extensions?.code, e.message])).toEqual([
        [['_entities', 0], 'unauthenticated', 'Authentication required: send Authorization: Bearer <token>'],
      ]);

      // A token naming both vaults must say which, as a root field without vaultId.
      const both = await testToken({ vaults: ['tntsandbox1', 'tntsandbox2'] });
      const unscoped = await entities(representations.slice(0, 1), both);
      expect(unscoped.body.errors?.map((e) => e.extensions?.code)).toEqual(['vault-required']);
    });

    it('resolves CardEvent references by notification id from the event log of the caller’s vault', async () => {
      const ours = notification({ cardId: cardIds[5]! });
      const theirs = notification({ cardId: otherVaultCardId, tenant: 'tntsandbox2' });
      expect((await postNotification(t.stack.url, ours)).status).toBe(200);
      expect((await postNotification(t.stack.url, theirs)).status).toBe(200);
      const unknownId = randomUUID();
      const byIds = vi.spyOn(t.stack.app.events!, 'byIds');
      const answer = await entities(
        [
          { __typename: 'CardEvent', id: theirs.id },
          { __typename: 'CardEvent', id: ours.id },
          { __typename: 'CardEvent', id: unknownId },
          { __typename: 'CardEvent', id: 'not an id!' },
          { __typename: 'CardEvent', id: ours.id },
        ],
        t.vault1Token,
      );
      expect(answer.body.errors).toBeUndefined();
      const event = {
        __typename: 'CardEvent',
        id: ours.id,
        tenant: 'tntsandbox1',
        type: 'UPDATED',
        eventCardId: cardIds[5],
      };
      expect(answer.body.data).toEqual({ _entities: [null, event, null, null, event] });
      // One log read for the request, in the caller's vault; the malformed id is never read.
      expect(byIds.mock.calls.map(([tenant, ids]) => [tenant, [...ids].sort()])).toEqual([
        ['tntsandbox1', [theirs.id, ours.id, unknownId].sort()],
      ]);
      byIds.mockRestore();

      const owner = await entities([{ __typename: 'CardEvent', id: theirs.id }], t.vault2Token);
      expect(owner.body.data).toEqual({
        _entities: [
          {
            __typename: 'CardEvent',
            id: theirs.id,
            tenant: 'tntsandbox2',
            type: 'UPDATED',
            eventCardId: otherVaultCardId,
          },
        ],
      });
    });

    it('refuses representations that name no entity, and more than NODES_MAX_IDS of them', async () => {
      const invalid = await entities(
        [{ __typename: 'Card', cardId: cardIds[0] }, { __typename: 'CardProduct', id: 'x' }, 'Card'],
        t.vault1Token,
      );
      expect(invalid.body.data).toBeNull();
      expect(invalid.body.errors?.map((e) => e.extensions?.code)).toEqual(['invalid-input']);

      const tooMany = Array.from({ length: 101 }, () => ({ __typename: 'Card', cardId: cardIds[0] }));
      const refused = await entities(tooMany, t.vault1Token);
      expect(refused.body.errors?.map((e) => e.extensions?.code)).toEqual(['operation-too-expensive']);
    });
  });
});

describe('FEDERATION off (the default): the standalone schema', () => {
  const t = useStack();

  it('has neither _service nor _entities', async () => {
    const answer = await postGraphql(t.stack.url, { query: '{ _service { sdl } }' }, t.vault1Token);
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.map((e) => e.extensions?.code)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });
});

describe('compiled execution (graphql-jit) of _entities', () => {
  it('answers as graphql-js, so the compiled run is kept (src/plugins/compiled-execution.ts)', async () => {
    const { subgraphSchema } = await import('../../src/schema/index.ts');
    const schema = await subgraphSchema();
    const document = parse(ENTITIES);
    const compiled = compileQuery(schema, document, 'Entities');
    if (!isCompiledQuery(compiled)) throw new Error('graphql-jit did not compile _entities');
    // A context with loaders answering from memory: this compares the executors, not the upstream.
    const context = () =>
      ({
        limits: { nodesMaxIds: 100 },
        viewer: {
          subject: 'test-user',
          vaults: ['tntsandbox1'],
          scopes: new Set(['cards:read', 'card-attributes:basic', 'network-tokens:read']),
        },
        loaders: {
          cardInterfaceCard: {
            load: async (key: { vaultId: string; cardId: string }) => ({
              id: key.cardId,
              vaultId: key.vaultId,
              panAlias: 'tok_sandbox_a',
              bin: '411111',
              last4: '1111',
            }),
          },
          networkToken: { load: async () => null },
          binAttributes: { load: async (key: { bin: string }) => ({ bin: key.bin, brand: 'VISA' }) },
        },
      }) as never;
    const variableValues = {
      representations: [
        { __typename: 'Card', cardId: 'CRD1' },
        { __typename: 'NetworkToken', panAlias: 'tok_sandbox_b' },
        { __typename: 'Card', cardId: 'CRD2' },
      ],
    };
    const jit = await compiled.query(undefined, context(), variableValues);
    const reference = await execute({ schema, document, contextValue: context(), variableValues });
    expect(jit).toEqual({
      data: {
        _entities: [
          {
            __typename: 'Card',
            cardId: 'CRD1',
            vaultId: 'tntsandbox1',
            bin: '411111',
            last4: '1111',
            attributes: { bin: '411111', brand: 'VISA' },
          },
          null,
          {
            __typename: 'Card',
            cardId: 'CRD2',
            vaultId: 'tntsandbox1',
            bin: '411111',
            last4: '1111',
            attributes: { bin: '411111', brand: 'VISA' },
          },
        ],
      },
    });
    expect(JSON.parse(JSON.stringify(reference))).toEqual(jit);
  });
});

describe('FEDERATION', () => {
  it('is off by default, on with FEDERATION=on, and refuses PERSISTED_OPERATIONS=require', () => {
    expect(loadConfig({}).federation).toEqual({ subgraph: false });
    expect(loadConfig({ FEDERATION: 'on' }).federation).toEqual({ subgraph: true });
    expect(loadConfig({ FEDERATION: 'off' }).federation).toEqual({ subgraph: false });
    expect(() => loadConfig({ FEDERATION: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ FEDERATION: 'on', PERSISTED_OPERATIONS: 'require' })).toThrow(
      /PERSISTED_OPERATIONS.*must be allow or off with FEDERATION=on/,
    );
  });
});

describe('FEDERATION=on with INTROSPECTION=off', () => {
  const t = useStack({ FEDERATION: 'on', INTROSPECTION: 'off' });

  it('refuses _service like __schema, and still resolves entities', async () => {
    const refused = await postGraphql(t.stack.url, { query: '{ _service { sdl } }' }, t.vault1Token);
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.map((e) => [e.message, e.extensions?.code])).toEqual([
      [
        'GraphQL introspection has been disabled, but the requested query contained the field "_service".',
        'GRAPHQL_VALIDATION_FAILED',
      ],
    ]);
    const answer = await postGraphql(
      t.stack.url,
      { query: ENTITIES, variables: { representations: [{ __typename: 'Card', cardId: 'CRDnotheld0001' }] } },
      t.vault1Token,
    );
    expect(answer.body).toEqual({ data: { _entities: [null] } });
  });
});

describe('npm run -s schema -- --subgraph', () => {
  it('prints the subgraph SDL _service answers, and leaves schema.graphql alone', async () => {
    const before = readFileSync('schema.graphql', 'utf8');
    const printed = execFileSync(process.execPath, ['src/schema/print.ts', '--subgraph'], {
      encoding: 'utf8',
    });
    expect(printed).toBe(`${await cardgraphSubgraphSdl()}\n`);
    expect(
      printed.startsWith('schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"]) {'),
    ).toBe(true);
    expect(readFileSync('schema.graphql', 'utf8')).toBe(before);
  });
});
