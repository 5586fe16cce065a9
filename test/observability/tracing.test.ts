import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, loadSandboxConfig } from '../../src/config.ts';
import { createTracing } from '../../src/lib/tracing.ts';
import {
  ALL_TEST_PANS,
  notification,
  postGraphql,
  postNotification,
  type Stack,
  startStack,
  successData,
} from '../support/fixtures.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/telemetry.ts';

const OPERATIONS = readFileSync(new URL('../../src/client/operations.graphql', import.meta.url), 'utf8');
/** SpanKind in OTLP: 2 server, 3 client. */
const SERVER = 2;
const CLIENT = 3;

describe('OpenTelemetry traces over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    stack = await startStack({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_SERVICE_NAME: 'cardgraph-test',
    });
    token = await stack.token();
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  const spansOf = (traceId: string) => receiver.spans.filter((span) => span.traceId === traceId);
  const child = (spans: ReceivedSpan[], parent: ReceivedSpan, name: RegExp) =>
    spans.filter((span) => span.parentSpanId === parent.spanId && name.test(span.name));

  it('puts a GraphQL operation, its upstream calls and the sandbox server spans in one trace', async () => {
    const created = await postGraphql(stack.url, { query: OPERATIONS, operationName: 'CreateCard' }, token);
    const { cardId } = successData<{ cardId: string }>(created, 'createCard');
    // A client's own trace: the gateway joins it (W3C traceparent).
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const answer = await postGraphql(
      stack.url,
      { query: OPERATIONS, operationName: 'CardById', variables: { cardId } },
      token,
      { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, 'x-request-id': 'trace-test-1' },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers['x-request-id']).toBe('trace-test-1');

    await expect
      .poll(() => spansOf(traceId).filter((span) => span.name.startsWith('sandbox ')).length, {
        timeout: 10_000,
      })
      .toBeGreaterThanOrEqual(2);
    const spans = spansOf(traceId);
    const request = spans.find((span) => span.name === 'POST /graphql')!;
    expect(request).toMatchObject({
      kind: SERVER,
      parentSpanId: '00f067aa0ba902b7',
      serviceName: 'cardgraph-test',
    });
    expect(request.attributes['cardgraph.request_id']).toBe('trace-test-1');

    const [operation] = child(spans, request, /^query CardById$/);
    expect(operation).toBeDefined();
    expect(operation!.attributes).toMatchObject({
      'graphql.operation.type': 'query',
      'graphql.operation.name': 'CardById',
      'cardgraph.request_id': 'trace-test-1',
    });

    // The card read and its BIN attributes: each an upstream client span under the operation, each
    // with the sandbox's server span under it (the sandbox honoured the traceparent it was sent).
    const upstream = child(spans, operation!, /^upstream /);
    expect(upstream.map((span) => span.name).sort()).toEqual(
      expect.arrayContaining(['upstream GET /card-interface/cards/{id}']),
    );
    for (const call of upstream) {
      expect(call.kind).toBe(CLIENT);
      const served = child(spans, call, /^sandbox /);
      expect(served).toHaveLength(1);
      expect(served[0]!.kind).toBe(SERVER);
      expect(served[0]!.name).toBe(
        `sandbox ${String(call.attributes['http.request.method'])} ${String(call.attributes['url.template'])}`,
      );
    }
  });

  it('traces a webhook: verification, log append and fan-out under the receiving request', async () => {
    const body = notification({ tenant: 'tntsandbox1' });
    expect((await postNotification(stack.url, body)).status).toBe(200);
    await expect
      .poll(() => receiver.spans.some((span) => span.name === 'card_event fan-out'), { timeout: 10_000 })
      .toBe(true);
    const request = receiver.spans.findLast((span) => span.name === 'POST /webhooks/card-events')!;
    const spans = spansOf(request.traceId);
    expect(child(spans, request, /^webhook verify signature$/)).toHaveLength(1);
    expect(child(spans, request, /^event_log append$/)).toHaveLength(1);
    await expect.poll(() => child(spansOf(request.traceId), request, /^card_event fan-out$/).length).toBe(1);
  });

  it('answers errors with the request id in extensions and exports no card number anywhere', async () => {
    const answer = await postGraphql(stack.url, { query: '{ nope }' }, token, {
      'x-request-id': 'trace-test-2',
    });
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({ requestId: 'trace-test-2' });
    const generated = await postGraphql(stack.url, { query: '{ nope }' }, token, {
      'x-request-id': 'bad id with spaces',
    });
    const id = generated.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated.body.errors?.[0]?.extensions).toMatchObject({ requestId: id });
    // Card numbers went upstream (CreateCard) and through webhooks; none may be in any span.
    await stack.app.tracing.forceFlush();
    const exported = receiver.bodies.join('\n');
    expect(ALL_TEST_PANS.filter((pan) => exported.includes(pan))).toEqual([]);
  });

  it('never lets a PAN written with dots in X-Request-Id or underscores in an operation name out (issue 20 item 8)', async () => {
    const sent = '4000.0566.5566.5556';
    const answer = await postGraphql(stack.url, { query: 'query Pan_4000_0566_5566_5556 { nope }' }, token, {
      'x-request-id': sent,
    });
    expect(answer.status).toBe(400);
    // The id is refused like a malformed one: a generated UUID in the header and the error extensions.
    const id = answer.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({
      code: 'GRAPHQL_VALIDATION_FAILED',
      requestId: id,
    });
    expect(JSON.stringify(answer.body)).not.toMatch(/4000.?0566.?5566.?5556/);
    await stack.app.tracing.forceFlush();
    await expect
      .poll(() => receiver.spans.some((span) => span.attributes['cardgraph.request_id'] === id), {
        timeout: 10_000,
      })
      .toBe(true);
    expect(receiver.bodies.join('\n')).not.toMatch(/4000.?0566.?5566.?5556/);
    // The access line: its request id is the generated one and the operation name is masked.
    const lines = readFileSync(stack.logFile, 'utf8');
    expect(lines).not.toMatch(/4000.?0566.?5566.?5556/);
    const access = lines
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; reqId?: string; operation?: string })
      .find((line) => line.msg === 'request' && line.reqId === id);
    expect(access?.operation).toBe('Pan_4000_05**_****_5556');
  });

  it('exports OTLP/HTTP protobuf, the default protocol, configured only by OTEL_* variables', async () => {
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_SERVICE_NAME: 'cardgraph-protobuf',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    });
    expect(config.tracing).toMatchObject({ protocol: 'http/protobuf', sampler: 'parentbased_always_on' });
    const tracing = createTracing(config.tracing);
    tracing.tracer.startSpan('protobuf-check-span').end();
    await tracing.shutdown();
    const body = Buffer.concat(receiver.protobufBodies).toString('latin1');
    expect(body).toContain('protobuf-check-span');
    expect(body).toContain('cardgraph-protobuf');
    expect(body).toContain('deployment.environment.name');
  });

  it('is off without an endpoint, and with OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    expect(loadConfig(endpoint).tracing?.endpoint).toBe(`${receiver.url}/v1/traces`);
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
    expect(createTracing(undefined).enabled).toBe(false);
    // The standalone sandbox (npm run sandbox) reads the same variables.
    expect(loadSandboxConfig({}).tracing).toBeUndefined();
    expect(loadSandboxConfig(endpoint).tracing).toMatchObject({
      endpoint: `${receiver.url}/v1/traces`,
      serviceName: 'cardgraph-sandbox',
    });
  });
});
