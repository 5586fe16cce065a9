import { createServer } from 'node:http';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { ReadinessReport } from '../lib/readiness.ts';
import { sendJson } from '../lib/transport-errors.ts';
import { closeNow, listen } from './listen.ts';

/** A listening metrics endpoint; disposing closes it and its connections. */
export interface MetricsListener extends AsyncDisposable {
  /** Base address, e.g. `http://127.0.0.1:9464`; Prometheus text at `${url}/metrics`. */
  url: string;
}

/**
 * The Prometheus listener on its own port (`METRICS_PORT`, `METRICS_HOST`), apart from the public
 * one: `GET`/`HEAD /metrics` answers the registry's text; `GET /readiness` the full readiness report
 * (`readiness`: every check by name, vault ids and upstream origins included, 503 when not ready),
 * which the public port keeps from anonymous callers (issue 20 item 4); anything else 404 with a JSON
 * error.
 * @throws the listen error (e.g. `EADDRINUSE`).
 */
export async function serveMetrics(options: {
  metrics: Metrics;
  port: number;
  host: string;
  logger: Logger;
  readiness?: () => Promise<ReadinessReport>;
}): Promise<MetricsListener> {
  const { metrics, logger } = options;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/readiness' && req.method === 'GET' && options.readiness) {
      options.readiness().then(
        (report) => sendJson(res, report.status === 'ready' ? 200 : 503, report),
        (error: unknown) => {
          logger.error({ err: error }, 'readiness probe failed');
          sendJson(res, 503, { status: 'unavailable', checks: {} });
        },
      );
      return;
    }
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      sendJson(res, 404, {
        errors: [{ status: '404', code: 'not-found', detail: 'GET /metrics or GET /readiness only' }],
      });
      return;
    }
    metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'metrics collection failed');
        res.writeHead(500).end();
      },
    );
  });
  const url = await listen(server, options.port, options.host);
  return { url, [Symbol.asyncDispose]: () => closeNow(server) };
}
