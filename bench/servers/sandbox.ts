/**
 * The bench's upstream: the embedded sandbox (src/sandbox) alone in its own process, the same one
 * for every gateway measured, answering in the specification's wire reading. `stats` add `requests`, the number of requests it has answered
 * (upstream calls per request = its growth ÷ the gateway's requests).
 */
import { pino } from 'pino';
import { createSandbox } from '../../src/sandbox/sandbox.ts';
import { serveStats } from '../lib/child.ts';

const sandbox = createSandbox({
  port: 0,
  host: '127.0.0.1',
  logger: pino({ level: 'silent' }),
  webhookDelayMs: 60_000,
  // The specification's reading: Hive Gateway's schema, derived from the sandbox's OpenAPI document,
  // cannot read the documented network token answer (no `data` envelope, a oneOf of both shapes), and
  // every gateway measured must see the same answers. cardgraph reads both readings alike.
  wire: 'specification',
});
const { url } = await sandbox.start();
serveStats({ url }, () => ({ requests: sandbox.requestCount() }));
