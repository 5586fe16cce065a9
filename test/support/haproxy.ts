import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { vi } from 'vitest';
import { freePort, keepOutput } from './local.ts';

/** deploy/haproxy.cfg: the configuration docker-compose.yml mounts, used here unchanged. */
const HAPROXY_CONFIG = new URL('../../deploy/haproxy.cfg', import.meta.url).pathname;
/** Output kept for failure messages (characters). */
const OUTPUT_KEPT_CHARS = 32 * 1024;

/**
 * Where {@link startHaproxy} connects to the gateways from by default: a loopback address of its
 * own, so the gateways can trust it (`TRUSTED_PROXIES`) while tests reach them directly from 127.0.0.1.
 */
export const HAPROXY_SOURCE_ADDRESS = '127.0.0.2';

/** A real HAProxy (Debian package, installed by `npm test`'s pretest step) on a free loopback port. */
export interface HaproxyProcess {
  /** Where clients connect, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Its log (one line per request, server state changes) and stderr. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `haproxy -db -f deploy/haproxy.cfg` in front of `gateways` (`host:port` each, exactly two
 * as in docker-compose.yml) with readiness checks every `checkIntervalMs`. Its connections to the
 * gateways come from `source` (a loopback address such as 127.0.0.2, `CARDGRAPH_LB_SOURCE`) and
 * open with a PROXY protocol v2 header: start the gateways with `TRUSTED_PROXIES` set to it.
 * @throws Error with HAProxy's output when it exits before listening.
 */
export async function startHaproxy(
  gateways: readonly [string, string],
  checkIntervalMs = 300,
  source = HAPROXY_SOURCE_ADDRESS,
): Promise<HaproxyProcess> {
  const port = await freePort();
  const binary = process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy';
  const child: ChildProcess = spawn(binary, ['-db', '-f', HAPROXY_CONFIG], {
    env: {
      PATH: process.env.PATH ?? '',
      CARDGRAPH_LB_BIND: `127.0.0.1:${port}`,
      CARDGRAPH_GATEWAY_1: gateways[0],
      CARDGRAPH_GATEWAY_2: gateways[1],
      CARDGRAPH_LB_CHECK_INTERVAL: `${checkIntervalMs}ms`,
      CARDGRAPH_LB_SOURCE: source,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = keepOutput(child, OUTPUT_KEPT_CHARS);
  const exited = once(child, 'exit');
  // HAProxy binds before it logs anything; wait until the port accepts connections.
  await vi.waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}:\n${output()}`);
      await new Promise<void>((resolve, reject) => {
        const client = connect({ host: '127.0.0.1', port }, () => {
          client.destroy();
          resolve();
        });
        client.once('error', () => reject(new Error(`haproxy did not listen on ${port}:\n${output()}`)));
      });
    },
    { timeout: 10_000, interval: 50 },
  );
  return {
    url: `http://127.0.0.1:${port}`,
    output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
