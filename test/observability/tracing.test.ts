import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { createTracing } from '../../src/lib/tracing.ts';
import { loadSandboxConfig } from '../../src/sandbox/config.ts';
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

/**
 * An OTLP/HTTP receiver and a gateway ({@link startStack}, `env` added) exporting its spans to it as
 * JSON every 50 ms, with a client token of the default vault.
 */
async function startTracedStack(
  env: Record<string, string>,
): Promise<{ receiver: OtlpReceiver; stack: Stack; token: string }> {
  const receiver = await startOtlpReceiver();
  const stack = await startStack({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    ...env,
  });
  return { receiver, stack, token: await stack.token() };
}

describe('OpenTelemetry traces over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    ({ receiver, stack, token } = await startTracedStack({ OTEL_SERVICE_NAME: 'cardgraph-test' }));
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  const spansOf = (traceId: string) => receiver.spans.filter((span) => span.traceId === traceId);
  const child = (spans: ReceivedSpan[], parent: ReceivedSpan, name: RegExp) =>
    spans.filter((span) => span.parentSpanId === parent.spanId && name.test(span.name));
  /** The trace id of the request span carrying request id `id`, once exported. */
  const traceOfRequest = async (id: string) => {
    await expect
      .poll(
        () =>
          receiver.spans.some(
            (span) => span.kind === SERVER && span.attributes['cardgraph.request_id'] === id,
          ),
        {
          timeout: 10_000,
        },
      )
      .toBe(true);
    return receiver.spans.find(
      (span) => span.kind === SERVER && span.attributes['cardgraph.request_id'] === id,
    )!.traceId;
  };

  it('puts a GraphQL operation, its upstream calls and the sandbox server spans in one trace', async () => {
    const created = await postGraphql(stack.url, { query: OPERATIONS, operationName: 'CreateCard' }, token);
    const { cardId } = successData<{ cardId: string }>(created, 'createCard');
    const answer = await postGraphql(
      stack.url,
      { query: OPERATIONS, operationName: 'CardById', variables: { cardId } },
      token,
      { 'x-request-id': 'trace-test-1' },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers['x-request-id']).toBe('trace-test-1');

    const traceId = await traceOfRequest('trace-test-1');
    await expect
      .poll(() => spansOf(traceId).filter((span) => span.name.startsWith('sandbox ')).length, {
        timeout: 10_000,
      })
      .toBeGreaterThanOrEqual(2);
    const spans = spansOf(traceId);
    const request = spans.find((span) => span.name === 'POST /graphql')!;
    expect(request).toMatchObject({ kind: SERVER, serviceName: 'cardgraph-test' });
    expect(request.parentSpanId ?? '').toBe('');
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

  it("makes its own sampling decision and never sends a client's trace id or tracestate upstream (issue 20 item 7)", async () => {
    const created = await postGraphql(stack.url, { query: OPERATIONS, operationName: 'CreateCard' }, token);
    const { cardId } = successData<{ cardId: string }>(created, 'createCard');
    const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    // sampled=00: on main the gateway's spans were switched off by the client.
    const answer = await postGraphql(
      stack.url,
      { query: OPERATIONS, operationName: 'CardById', variables: { cardId } },
      token,
      {
        traceparent: `00-${clientTrace}-00f067aa0ba902b7-00`,
        tracestate: 'vendorq7=markerq7tracestate,pan=4000056655665556',
        'x-request-id': 'trace-own-1',
      },
    );
    expect(answer.status).toBe(200);
    const traceId = await traceOfRequest('trace-own-1');
    expect(traceId).not.toBe(clientTrace);
    const request = spansOf(traceId).find(
      (span) => span.kind === SERVER && span.attributes['cardgraph.request_id'] === 'trace-own-1',
    )!;
    expect(request.parentSpanId ?? '').toBe('');
    // The provider joined the gateway's own trace.
    await expect
      .poll(() => spansOf(traceId).filter((span) => span.name.startsWith('sandbox ')).length, {
        timeout: 10_000,
      })
      .toBeGreaterThanOrEqual(1);
    await stack.app.tracing.forceFlush();
    const exported = receiver.bodies.join('\n');
    expect(exported).not.toContain(clientTrace);
    expect(exported).not.toContain('markerq7tracestate');
    expect(exported).not.toMatch(/4000.?0566.?5566.?5556/);
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

  it('masks resource values and drops tracestate from exported spans', async () => {
    const tracing = await createTracing({
      ...loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })
        .tracing!,
      serviceName: 'svc-4111 1111 1111 1111',
      resourceAttributes: { 'deployment.environment.name': 'env_4000.0566.5566.5556' },
    });
    tracing.tracer
      .startSpan('resource-check-span', { attributes: { 'client.note': '5105_1051_0510_5100' } })
      .end();
    await tracing.shutdown();
    const body = receiver.bodies.find((one) => one.includes('resource-check-span'))!;
    expect(body).toContain('svc-4111 11** **** 1111');
    expect(body).toContain('env_4000.05**.****.5556');
    expect(body).toContain('5105_10**_****_5100');
    expect(body).not.toMatch(/4111 1111 1111 1111|5566\.5556|0510_5100/);
  });

  it('exports OTLP/HTTP protobuf, the default protocol, configured only by OTEL_* variables', async () => {
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_SERVICE_NAME: 'cardgraph-protobuf',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    });
    expect(config.tracing).toMatchObject({
      protocol: 'http/protobuf',
      sampler: 'parentbased_always_on',
      trustClientTrace: false,
    });
    const tracing = await createTracing(config.tracing);
    tracing.tracer.startSpan('protobuf-check-span').end();
    await tracing.shutdown();
    const body = Buffer.concat(receiver.protobufBodies).toString('latin1');
    expect(body).toContain('protobuf-check-span');
    expect(body).toContain('cardgraph-protobuf');
    expect(body).toContain('deployment.environment.name');
  });

  it('is off without an endpoint, and with OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none', async () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    expect(loadConfig(endpoint).tracing?.endpoint).toBe(`${receiver.url}/v1/traces`);
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
    expect((await createTracing(undefined)).enabled).toBe(false);
    // The standalone sandbox (npm run sandbox) reads the same variables.
    expect(loadSandboxConfig({}).tracing).toBeUndefined();
    expect(loadSandboxConfig(endpoint).tracing).toMatchObject({
      endpoint: `${receiver.url}/v1/traces`,
      serviceName: 'cardgraph-sandbox',
    });
  });
});

describe('OTEL_TRUST_CLIENT_TRACE=on', () => {
  let receiver: OtlpReceiver;
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    ({ receiver, stack, token } = await startTracedStack({ OTEL_TRUST_CLIENT_TRACE: 'on' }));
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  it("continues a client's trace and honours its sampled flag, but sends the provider neither its trace id nor its tracestate", async () => {
    const created = await postGraphql(stack.url, { query: OPERATIONS, operationName: 'CreateCard' }, token);
    const { cardId } = successData<{ cardId: string }>(created, 'createCard');
    const clientTrace = '0af7651916cd43dd8448eb211c80319c';
    const read = (sampled: string, requestId: string) =>
      postGraphql(stack.url, { query: OPERATIONS, operationName: 'CardById', variables: { cardId } }, token, {
        traceparent: `00-${clientTrace}-b7ad6b7169203331-${sampled}`,
        tracestate: 'vendorq7=markerq7tracestate',
        'x-request-id': requestId,
      });
    expect((await read('01', 'trusted-1')).status).toBe(200);
    await expect
      .poll(
        () =>
          receiver.spans.filter((span) => span.traceId === clientTrace && span.name.startsWith('upstream '))
            .length,
        {
          timeout: 10_000,
        },
      )
      .toBeGreaterThanOrEqual(1);
    // The request span ends last (when the response closes), so it may come in a later export batch
    // than the upstream spans: wait for it too.
    await expect
      .poll(
        () =>
          receiver.spans.find(
            (span) => span.kind === SERVER && span.attributes['cardgraph.request_id'] === 'trusted-1',
          ),
        { timeout: 10_000 },
      )
      .toMatchObject({ traceId: clientTrace, parentSpanId: 'b7ad6b7169203331' });
    // A declined trace stays declined: no span of the second read.
    expect((await read('00', 'trusted-declined')).status).toBe(200);
    await stack.app.tracing.forceFlush();
    // The provider's server spans are in traces of their own, never the client's.
    const sandboxSpans = receiver.spans.filter((span) => span.name.startsWith('sandbox '));
    expect(sandboxSpans.length).toBeGreaterThanOrEqual(1);
    expect(sandboxSpans.filter((span) => span.traceId === clientTrace)).toEqual([]);
    expect(
      receiver.spans.filter((span) => span.attributes['cardgraph.request_id'] === 'trusted-declined'),
    ).toEqual([]);
    expect(receiver.bodies.join('\n')).not.toContain('markerq7tracestate');
  });
});
