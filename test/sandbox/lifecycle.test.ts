import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { SANDBOX_TEST_CARDS } from '../../src/sandbox/test-cards.ts';
import { startReceiver, startSandbox, WAIT } from '../support/fixtures.ts';

describe('sandbox lifecycle', () => {
  it('reports the real port, logs requests without ids beyond the path, and stops during a 4998 hang', async () => {
    const t = await startSandbox();
    expect(t.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(t.url).not.toMatch(/:0$/);
    const token = await t.token('tntsandbox1');
    const hanging = t
      .call('POST', '/card-interface/cards', {
        token,
        contentType: 'application/vnd.api+json',
        body: {
          data: { type: 'cards', attributes: { pan: '5100260000794998', exp_month: 1, exp_year: 30 } },
        },
      })
      .then(
        () => 'answered',
        () => 'connection closed',
      );
    await t.call('GET', '/account-updater/cards/CRDnothing?x=1', { token });
    // The hanging request is answered by nobody, so nothing shows it has reached the sandbox; the GET
    // above, sent after it, has been answered, and 50 ms more leave it time to arrive.
    await sleep(50);
    const started = Date.now();
    await t.stop();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await hanging).toBe('connection closed');
    expect(t.sandbox.requests()).toEqual([
      { method: 'POST', path: '/oauth/token', status: 200 },
      { method: 'GET', path: '/account-updater/cards/CRDnothing', status: 404, vault: 'tntsandbox1' },
    ]);
  });

  it('never writes a test PAN or CVC to the log, even at trace level', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-log-'));
    const file = join(dir, 'sandbox.log');
    const logger = createLogger({
      name: 'sandbox',
      level: 'trace',
      destination: pino.destination({ dest: file, sync: true }),
    });
    const t = await startSandbox({ logger, webhookDelayMs: 10, retryScheduleMs: [0, 20], hangMs: 20 });
    const receiver = await startReceiver((n) => (n % 2 === 0 ? 200 : 500));
    t.sandbox.registerWebhookEndpoint('tntsandbox1', {
      url: receiver.url,
      secret: 'whsec_log_test_0123456789',
    });
    const token = await t.token('tntsandbox1');
    for (const card of SANDBOX_TEST_CARDS) {
      const ci = await t.call('POST', '/card-interface/cards', {
        token,
        contentType: 'application/vnd.api+json',
        body: {
          data: { type: 'cards', attributes: { pan: card.pan, cvc: '9876', exp_month: 1, exp_year: 30 } },
        },
      });
      if (ci.status === 201) {
        const id = ci.body.data.id;
        await t.call('POST', `/card-interface/cards/${id}/card-update-subscriptions`, { token });
        await t.call('POST', `/card-interface/cards/${id}/check`, { token });
      }
      await t.call('POST', '/account-updater/cards', {
        token,
        body: { name: 'Ada', number: card.pan, exp_month: 1, exp_year: 30 },
      });
      await t.call('POST', '/account-updater/card-check', {
        token,
        body: { number: card.pan, exp_month: 1, exp_year: 30, cvv: '9876' },
      });
    }
    await vi.waitFor(() => expect(readFileSync(file, 'utf8')).toContain('webhook delivery'), WAIT);
    await t.stop();
    await receiver.close();
    const log = readFileSync(file, 'utf8');
    expect(log).toContain('"msg":"request"');
    expect(log).toContain('webhook delivery');
    for (const card of SANDBOX_TEST_CARDS) expect(log).not.toContain(card.pan);
    expect(log).not.toContain('"9876"');
    expect(log.replace(/"time":\d+/g, '')).not.toMatch(/\d{13,19}/);
  });

  it('npm run sandbox entry starts, logs its addresses, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, ['src/sandbox/main.ts'], {
      cwd: join(import.meta.dirname, '../..'),
      env: {
        PATH: process.env.PATH,
        SANDBOX_PORT: '0',
        LOG_LEVEL: 'info',
        SANDBOX_WEBHOOK_URL: 'http://127.0.0.1:9/hook',
        SANDBOX_WEBHOOK_SECRET: 'whsec_entry_secret_0123456789',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await vi.waitFor(() => expect(output).toContain('sandbox ready'), { timeout: 8_000, interval: 20 });
    const ready = output
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((line) => line.msg === 'sandbox ready');
    expect(ready.cardInterfaceUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/card-interface$/);
    expect(ready.accountUpdaterUrl).toMatch(/\/account-updater$/);
    expect(ready.tokenUrl).toMatch(/\/oauth\/token$/);
    expect(output.match(/webhook endpoint registered/g)).toHaveLength(2);
    expect(output).not.toContain('whsec_entry_secret_0123456789');
    const token = await fetch(ready.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=sandbox-client-1&client_secret=sandbox-secret-1',
    });
    expect(token.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 10_000);
});
