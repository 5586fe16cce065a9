import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_TEST_PANS,
  notification,
  postGraphql,
  postNotification,
  requestGraphql,
  type Stack,
  startStack,
  successData,
  waitForSubscribers,
} from '../support/fixtures.ts';
import { largestValue, type MetricSample, sampleValue, scrapeMetrics } from '../support/telemetry.ts';

const OPERATIONS = readFileSync(new URL('../../src/client/operations.graphql', import.meta.url), 'utf8');

/** Every series the issue asks for, each of which must have a non-zero sample after the flow. */
const SERIES = [
  'cardgraph_graphql_operations_total',
  'cardgraph_graphql_operation_duration_seconds',
  'cardgraph_graphql_errors_total',
  'cardgraph_upstream_request_duration_seconds',
  'cardgraph_upstream_token_fetches_total',
  'cardgraph_webhook_notifications_total',
  'cardgraph_event_log_append_duration_seconds',
  'cardgraph_graphql_live_subscriptions',
  'cardgraph_event_delivery_lag_seconds',
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_heap_size_used_bytes',
  'nodejs_active_handles_total',
];

describe('Prometheus metrics', () => {
  let stack: Stack;
  let metricsUrl: string;
  const identifiers = new Set<string>();

  beforeAll(async () => {
    stack = await startStack();
    metricsUrl = JSON.parse(
      readFileSync(stack.logFile, 'utf8')
        .split('\n')
        .find((line) => line.includes('cardgraph gateway listening'))!,
    ).metrics.replace(/\/metrics$/, '');
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('serves every series, non-zero, after queries, webhooks and subscriptions, with bounded labels only', async () => {
    const token = await stack.token();
    // Live subscribers on both transports: graphql-ws and SSE.
    const ws = stack.wsClient(token);
    const wsEvents: unknown[] = [];
    const stopWs = ws.subscribe(
      { query: OPERATIONS, operationName: 'LiveCardEvents' },
      { next: (event) => wsEvents.push(event), error: () => {}, complete: () => {} },
    );
    const sse = await requestGraphql(
      stack.url,
      { query: OPERATIONS, operationName: 'LiveCardEvents' },
      token,
      { accept: 'text/event-stream' },
    );
    expect(sse.statusCode).toBe(200);
    sse.body.on('data', () => {});
    await waitForSubscribers(stack.app, 'tntsandbox1', 2);

    // Queries and mutations: upstream calls, token fetch, an enrolment whose webhook reaches both.
    const enrolled = await postGraphql(
      stack.url,
      { query: OPERATIONS, operationName: 'EnrolCardWithWebhook' },
      token,
    );
    const enrolment = successData<{ id: string; cardId: string }>(enrolled, 'enrollAccountUpdaterCard');
    identifiers.add(enrolment.cardId).add(enrolment.id);
    const created = await postGraphql(stack.url, { query: OPERATIONS, operationName: 'CreateCard' }, token);
    const card = successData<{ id: string; cardId: string; panAlias: string }>(created, 'createCard');
    identifiers.add(card.cardId).add(card.panAlias).add(card.id);
    await postGraphql(
      stack.url,
      { query: OPERATIONS, operationName: 'CardById', variables: { cardId: card.cardId } },
      token,
    );
    // Client mistakes: a validation error, an unknown operation name with a card number in it.
    await postGraphql(stack.url, { query: '{ nope }' }, token);
    await postGraphql(stack.url, { query: 'query Q4000210000192002 { viewer { subject } }' }, token);
    await expect.poll(() => wsEvents.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);

    // Webhooks: accepted, duplicate, refused (bad signature).
    const body = notification({ tenant: 'tntsandbox1' });
    identifiers.add(String(body.cardId ?? (body.data as { card_id?: string } | undefined)?.card_id ?? ''));
    expect((await postNotification(stack.url, body)).body.data?.status).toBe('accepted');
    expect((await postNotification(stack.url, body)).body.data?.status).toBe('duplicate');
    const forged = await request(`${stack.url}/webhooks/card-events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'vgs-signature': 't=1,v0=00' },
      body: JSON.stringify(notification()),
    });
    expect(forged.statusCode).toBe(401);
    await forged.body.dump();

    const { text, families, samples } = await scrapeMetrics(metricsUrl);
    const names = families.map((family) => family.name);
    for (const name of SERIES) {
      expect(names, name).toContain(name);
      expect(largestValue(families.find((family) => family.name === name)!, samples), name).toBeGreaterThan(
        0,
      );
    }
    const sample = (name: string, labels: Record<string, string>) =>
      sampleValue(
        samples,
        families.find((f) => f.name === name)?.type === 'HISTOGRAM' ? `${name}_count` : name,
        labels,
      );
    expect(sample('cardgraph_graphql_live_subscriptions', { transport: 'graphql-ws' })).toBe(1);
    expect(sample('cardgraph_graphql_live_subscriptions', { transport: 'sse' })).toBe(1);
    expect(
      sample('cardgraph_graphql_operations_total', {
        operation: 'CardById',
        type: 'query',
        outcome: 'success',
      }),
    ).toBe(1);
    expect(
      sample('cardgraph_graphql_operations_total', { operation: 'other', type: 'query', outcome: 'success' }),
    ).toBe(1);
    expect(
      sample('cardgraph_graphql_errors_total', { operation: 'anonymous', code: 'GRAPHQL_VALIDATION_FAILED' }),
    ).toBe(1);
    expect(
      sample('cardgraph_upstream_request_duration_seconds', {
        area: 'card-interface',
        operation: 'GET /card-interface/cards/{id}',
        status: '200',
      }),
    ).toBe(1);
    expect(
      sample('cardgraph_upstream_token_fetches_total', { vault: 'tntsandbox1', outcome: 'success' }),
    ).toBe(1);
    expect(
      sample('cardgraph_webhook_notifications_total', { outcome: 'accepted', reason: 'none' }),
    ).toBeGreaterThanOrEqual(2);
    expect(sample('cardgraph_webhook_notifications_total', { outcome: 'duplicate', reason: 'none' })).toBe(1);
    expect(
      sample('cardgraph_webhook_notifications_total', { outcome: 'rejected', reason: 'stale-timestamp' }),
    ).toBe(1);
    expect(
      sample('cardgraph_event_log_append_duration_seconds', { backend: 'sqlite', outcome: 'appended' }),
    ).toBeGreaterThanOrEqual(2);

    // No label value comes from a test card: no PAN, card id, alias or resource id anywhere.
    const labelValues = samples.flatMap((one: MetricSample) => Object.values(one.labels));
    for (const value of labelValues) {
      for (const pan of ALL_TEST_PANS) expect(value).not.toContain(pan);
      for (const id of identifiers) if (id) expect(value).not.toContain(id);
      expect(value).not.toMatch(/\d{6,}/);
    }
    for (const pan of ALL_TEST_PANS) expect(text).not.toContain(pan);

    stopWs();
    sse.body.destroy();
    await expect
      .poll(async () =>
        sampleValue((await scrapeMetrics(metricsUrl)).samples, 'cardgraph_graphql_live_subscriptions', {
          transport: 'graphql-ws',
        }),
      )
      .toBe(0);
    await expect
      .poll(async () =>
        sampleValue((await scrapeMetrics(metricsUrl)).samples, 'cardgraph_graphql_live_subscriptions', {
          transport: 'sse',
        }),
      )
      .toBe(0);
  });

  it('answers only GET /metrics on the metrics port, and never on the public port', async () => {
    expect((await request(`${metricsUrl}/other`)).statusCode).toBe(404);
    const publicMetrics = await request(`${stack.url}/metrics`);
    expect(publicMetrics.statusCode).toBe(404);
    await publicMetrics.body.dump();
  });
});
