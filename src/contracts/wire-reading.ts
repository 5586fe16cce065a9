/**
 * The wire readings the embedded sandbox answers in (`SANDBOX_WIRE`, `SandboxOptions.wire`):
 * - `documented` (default): the statuses, envelopes, member types and notification shapes the
 *   provider's own documentation shows (sandbox contract §8, `../shared/provider-docs/examples.json`);
 * - `specification`: the interface specification's readings where the two differ
 *   (docs/gap-decisions.md), so the gateway's tolerant reader is tested against both.
 */
export const SANDBOX_WIRES = ['documented', 'specification'] as const;

/** One of {@link SANDBOX_WIRES}. */
export type SandboxWire = (typeof SANDBOX_WIRES)[number];
