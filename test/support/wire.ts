import type { SandboxWire } from '../../src/contracts/wire-reading.ts';

/**
 * The wire reading the test sandboxes answer in (`SANDBOX_WIRE=specification` runs the tests
 * against the specification's reading; the documented one otherwise, sandbox contract §8), and what
 * it decides for account updater v1 and network tokens (issue 19), so one test runs against both.
 */
export const TEST_WIRE: SandboxWire =
  process.env.SANDBOX_WIRE === 'specification' ? 'specification' : 'documented';

/** True when the test sandboxes answer in the provider's documented form (the default). */
export const DOCUMENTED = TEST_WIRE === 'documented';

/** Success status of v1 `POST /cards`: 202 documented, 201 in the specification's reading. */
export const V1_ENROL_STATUS = DOCUMENTED ? 202 : 201;

/** Success status of v1 `POST /card-check`: 202 documented, 200 in the specification's reading. */
export const V1_CHECK_STATUS = DOCUMENTED ? 202 : 200;

/** Success status of a new `POST /network-tokens`: 200 documented (final state), 202 (pending) otherwise. */
export const NT_PROVISION_STATUS = DOCUMENTED ? 200 : 202;

/** Name of the merchant id in v1 answers: `vgs_merchant_id` documented, `service_merchant_id` otherwise. */
export const MERCHANT_ID_MEMBER = DOCUMENTED ? 'vgs_merchant_id' : 'service_merchant_id';

/** JSON members as tests read them (arbitrary, asserted on). */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON members and assert on them
type Json = Record<string, any>;

/** A network token answer's token: the body itself (documented) or its `data` (specification). */
export function tokenOf(body: unknown): Json {
  return (DOCUMENTED ? body : (body as { data: unknown }).data) as Json;
}

/** A network token body as the wire reading answers it: bare (documented) or in `data`. */
export function asTokenAnswer(token: Record<string, unknown>): Record<string, unknown> {
  return DOCUMENTED ? token : { data: token };
}
