/**
 * The bench's upstream: the embedded sandbox (src/sandbox) alone in its own process, the same one
 * for every gateway measured. `stats` add `requests`, the number of requests it has answered
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
});
const { url } = await sandbox.start();
serveStats({ url }, () => ({ requests: sandbox.requestCount() }));
