import { z } from 'zod';
import { integer, logLevel, port, type SettingsSection } from './fields.ts';

/** The gateway process: where it listens, what it logs, how long it may take to stop. */
export const serverSettings = {
  title: 'Gateway process',
  about: '',
  shape: {
    PORT: port
      .default(4000)
      .describe(
        'HTTP port of the gateway: GraphQL, GraphiQL, SSE and graphql-ws at /graphql, webhooks at /webhooks/card-events. 0 picks a free port.',
      ),
    HOST: z.string().min(1).default('0.0.0.0').describe('Interface the gateway listens on.'),
    LOG_LEVEL: logLevel.describe('fatal | error | warn | info | debug | trace | silent.'),
    SHUTDOWN_TIMEOUT_MS: integer(500, 600_000, 15_000).describe(
      'Longest a graceful shutdown (SIGTERM, SIGINT) may take (ms): requests still running near the end are cut off, in-flight upstream calls aborted, and the process exits by then at the latest.',
    ),
  },
} satisfies SettingsSection;

/** The process settings of the gateway's configuration. */
export interface ServerConfig {
  /** HTTP port of the gateway (GraphQL, GraphiQL, graphql-ws, webhooks). 0 picks a free port. */
  port: number;
  host: string;
  logLevel: string;
  /**
   * Longest a graceful shutdown (SIGTERM, SIGINT) may take, in ms (`SHUTDOWN_TIMEOUT_MS`): requests
   * still running shortly before it are cut off, in-flight upstream calls aborted, and the process
   * exits at the latest when it passes.
   */
  shutdownTimeoutMs: number;
}

/** {@link ServerConfig} from the parsed variables. */
export function serverConfig(e: z.output<z.ZodObject<typeof serverSettings.shape>>): ServerConfig {
  return { port: e.PORT, host: e.HOST, logLevel: e.LOG_LEVEL, shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS };
}
