import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../src/lib/logger.ts';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/sandbox.ts';

/** Client credentials of contract §2. */
export const CLIENTS = {
  tntsandbox1: { id: 'sandbox-client-1', secret: 'sandbox-secret-1' },
  tntsandbox2: { id: 'sandbox-client-2', secret: 'sandbox-secret-2' },
} as const;

export type Vault = keyof typeof CLIENTS;

/** A started sandbox plus request helpers bound to its address. */
export interface TestSandbox {
  sandbox: Sandbox;
  url: string;
  /** Access token of a vault, optionally limited to `scope` (space-separated). */
  token(vault: Vault, scope?: string): Promise<string>;
  /** Sends a request; `body` is JSON-encoded with `contentType` unless it is a string. */
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; contentType?: string },
    // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON members and assert on them
  ): Promise<{ status: number; headers: Headers; body: any; text: string }>;
  /**
   * Stops the sandbox, then fails when any of its answers violated its OpenAPI document (response
   * validation is on in every test sandbox).
   */
  stop(): Promise<void>;
}

/**
 * @throws Error listing the violations (method, path, status, problem) when there are any.
 */
export function assertNoResponseViolations(sandbox: Pick<Sandbox, 'responseViolations'>): void {
  const violations = sandbox.responseViolations();
  if (violations.length === 0) return;
  const lines = violations.map((v) => `${v.method} ${v.path} → ${v.status}: ${v.problem}`);
  throw new Error(`sandbox answers violate its OpenAPI document:\n${lines.join('\n')}`);
}

/**
 * Starts a sandbox on a free port with a silent logger (unless given one), validating every answer
 * against its OpenAPI document.
 */
export async function startSandbox(options: Partial<SandboxOptions> = {}): Promise<TestSandbox> {
  const sandbox = createSandbox({
    port: 0,
    logger: createLogger({ name: 'sandbox', level: 'silent' }),
    webhookDelayMs: 50,
    validateResponses: true,
    ...options,
  });
  const { url } = await sandbox.start();
  const call: TestSandbox['call'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    }
    const response = await fetch(`${url}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };
  const tokens = new Map<string, string>();
  return {
    sandbox,
    url,
    call,
    async token(vault, scope) {
      const key = `${vault} ${scope ?? ''}`;
      const cached = tokens.get(key);
      if (cached) return cached;
      const form = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: CLIENTS[vault].id,
        client_secret: CLIENTS[vault].secret,
        ...(scope ? { scope } : {}),
      });
      const response = await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      if (response.status !== 200) throw new Error(`token request failed: ${response.status}`);
      const { access_token } = (await response.json()) as { access_token: string };
      tokens.set(key, access_token);
      return access_token;
    },
    async stop() {
      await sandbox.stop();
      assertNoResponseViolations(sandbox);
    },
  };
}

/** A request captured by {@link startReceiver}. */
export interface ReceivedRequest {
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/**
 * A local webhook receiver. `answer(n)` gives the status for the n-th request (1-based).
 */
export async function startReceiver(answer: (n: number) => number = () => 200): Promise<{
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ headers: req.headers, body: Buffer.concat(chunks) });
    res.writeHead(answer(received.length)).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Polls `check` every 10 ms until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(check: () => T | undefined, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('waitFor: timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
