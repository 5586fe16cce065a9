import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { trustedOperationNames } from '../../src/plugins/operation-metrics.ts';
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
import {
  largestValue,
  type MetricSample,
  samplesOf,
  sampleValue,
  scrapeMetrics,
} from '../support/telemetry.ts';

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
      // Vault ids are labels only with METRICS_VAULT_LABELS=on.
      sample('cardgraph_upstream_token_fetches_total', { vault: 'all', outcome: 'success' }),
    ).toBe(1);
    expect(text).not.toContain('tntsandbox');
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

  it('labels only trusted operation names: made-up names and card numbers in names are other (issue 20 item 5)', async () => {
    const token = await stack.token();
    const countOf = async (operation: string) =>
      sampleValue((await scrapeMetrics(metricsUrl)).samples, 'cardgraph_graphql_operations_total', {
        operation,
        type: 'query',
        outcome: 'success',
      });
    const otherBefore = await countOf('other');
    const meBefore = await countOf('Me');
    // 120 anonymous-looking clients naming their queries: once 100 slots filled the label set on main.
    const names = [
      ...Array.from({ length: 120 }, (_, i) => `Flood${i}`),
      'Pan_4111_1111_1111_1111',
      'Pan_4000_0566_5566_5556',
      'P4000x0566x5566x5556',
    ];
    for (const name of names) {
      const answer = await postGraphql(stack.url, { query: `query ${name} { viewer { subject } }` }, token);
      expect(answer.status).toBe(200);
    }
    const viewer = await postGraphql(stack.url, { query: OPERATIONS, operationName: 'Me' }, token);
    expect(viewer.status).toBe(200);
    expect(await countOf('other')).toBe(otherBefore + names.length);
    expect(await countOf('Me')).toBe(meBefore + 1);
    const { text } = await scrapeMetrics(metricsUrl);
    // Label values only: a sample value such as 0.00566 would match the digits by chance.
    const labelSets = text.match(/\{[^}]*\}/g) ?? [];
    expect(labelSets.length).toBeGreaterThan(0);
    expect(labelSets.filter((labels) => /Flood\d|Pan_|4111|0566/.test(labels))).toEqual([]);
  });

  it('binds the metrics listener to loopback whatever HOST says, unless METRICS_HOST does', () => {
    expect(new URL(metricsUrl).hostname).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).metrics).toEqual({
      port: 9464,
      host: '127.0.0.1',
      vaultLabels: false,
    });
    expect(
      loadConfig({ HOST: '0.0.0.0', METRICS_HOST: '0.0.0.0', METRICS_VAULT_LABELS: 'on' }).metrics,
    ).toEqual({
      port: 9464,
      host: '0.0.0.0',
      vaultLabels: true,
    });
  });

  it('labels token fetches by vault only when the operator opts in (METRICS_VAULT_LABELS=on)', async () => {
    for (const [vaultLabels, vault] of [
      [true, 'tntlive00001'],
      [false, 'all'],
    ] as const) {
      const metrics = createMetrics({ vaultLabels });
      metrics.tokenFetches.inc({ vault: 'tntlive00001', outcome: 'success' });
      metrics.tokenFetches.inc({ vault: 'tntlive00002', outcome: 'failure' }, 2);
      const samples = samplesOf(await metrics.registry.metrics()).filter(
        (one) => one.name === 'cardgraph_upstream_token_fetches_total',
      );
      expect(samples).toContainEqual({
        name: 'cardgraph_upstream_token_fetches_total',
        labels: { vault, outcome: 'success' },
        value: 1,
      });
      expect(samples.some((one) => one.labels.vault === 'tntlive00002')).toBe(vaultLabels);
    }
  });

  it('drops trusted names that hold a card number and reads names from the trusted-documents manifest', () => {
    const metrics = createMetrics({
      knownOperationNames: ['CardById', 'Pan_4000_0566_5566_5556', 'Q4111111111111111'],
    });
    expect(metrics.operationLabel('CardById')).toBe('CardById');
    expect(metrics.operationLabel('Pan_4000_0566_5566_5556')).toBe('other');
    expect(metrics.operationLabel('Q4111111111111111')).toBe('other');
    expect(metrics.operationLabel('NotShipped')).toBe('other');
    expect(metrics.operationLabel(null)).toBe('anonymous');
    const dir = mkdtempSync(join(tmpdir(), 'cardgraph-manifest-'));
    const manifestPath = join(dir, 'persisted-documents.json');
    writeFileSync(
      manifestPath,
      JSON.stringify({
        [`sha256:${'a'.repeat(64)}`]: 'query PartnerOnly { viewer { subject } }',
        [`sha256:${'b'.repeat(64)}`]: '{ not parsed',
      }),
    );
    const names = trustedOperationNames({ mode: 'allow', manifestPath });
    expect(names).toContain('PartnerOnly');
    expect(names).toContain('CardById');
    expect(trustedOperationNames({ mode: 'off', manifestPath })).not.toContain('PartnerOnly');
  });

  it('answers only GET /metrics on the metrics port, and never on the public port', async () => {
    expect((await request(`${metricsUrl}/other`)).statusCode).toBe(404);
    const publicMetrics = await request(`${stack.url}/metrics`);
    expect(publicMetrics.statusCode).toBe(404);
    await publicMetrics.body.dump();
  });
});

describe('metrics listener address', () => {
  /** An IPv4 address of this machine that is not loopback, when it has one. */
  const lanAddress = Object.values(networkInterfaces())
    .flat()
    .find((nic) => nic && nic.family === 'IPv4' && !nic.internal)?.address;
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ HOST: '0.0.0.0' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** Whether a TCP connection to `host:port` is accepted. */
  const accepts = (host: string, port: number) =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, host);
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });

  it.skipIf(!lanAddress)(
    'is reachable on loopback only while the public port listens on every interface (HOST=0.0.0.0)',
    async () => {
      const metricsPort = Number(
        JSON.parse(
          readFileSync(stack.logFile, 'utf8')
            .split('\n')
            .find((line) => line.includes('cardgraph gateway listening'))!,
        ).metrics.match(/:(\d+)\/metrics$/)[1],
      );
      const publicPort = Number(new URL(stack.url).port);
      expect(await accepts(lanAddress!, publicPort)).toBe(true);
      expect(await accepts('127.0.0.1', metricsPort)).toBe(true);
      expect(await accepts(lanAddress!, metricsPort)).toBe(false);
    },
  );
});
