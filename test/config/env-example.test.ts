import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { envExample } from '../../scripts/env-example.ts';
import { GATEWAY_SETTINGS, loadConfig } from '../../src/config/index.ts';
import { loadSandboxConfig, standaloneSandboxSettings } from '../../src/sandbox/config.ts';

const committed = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');

describe('.env.example', () => {
  it('is the file generated from the settings of src/config/ and src/sandbox/config.ts (run `npm run env-example` after changing them)', () => {
    expect(committed).toBe(envExample());
  });

  it('names every variable the gateway and the sandbox read, each once, with a description', () => {
    const shapes = [...GATEWAY_SETTINGS, standaloneSandboxSettings].map((section) => section.shape);
    const names = shapes.flatMap((shape) => Object.keys(shape));
    expect(new Set(names).size).toBe(names.length);
    const listed = [...committed.matchAll(/^([A-Z][A-Z0-9_]*)=$/gm)].map((match) => match[1]);
    expect(listed).toEqual(names);
    for (const shape of shapes) {
      for (const [name, schema] of Object.entries(shape)) expect(schema.description, name).toMatch(/\S/);
    }
    expect(committed).toContain(
      '# Port of the sandbox; 0 picks a free port. Default: 4010.\nSANDBOX_PORT=\n',
    );
  });

  it('works as an env file as it stands: every empty value is unset, so each setting takes its default', () => {
    const fromFile = parseEnv(committed);
    expect(Object.values(fromFile).every((value) => value === '')).toBe(true);
    const { webhooks: fileWebhooks, ...gateway } = loadConfig(fromFile);
    const { webhooks: defaultWebhooks, ...defaults } = loadConfig({});
    expect(gateway).toEqual(defaults);
    expect(fileWebhooks.toleranceS).toBe(defaultWebhooks.toleranceS);
    const { webhookSecret: _fileSecret, ...sandbox } = loadSandboxConfig(fromFile);
    const { webhookSecret: _defaultSecret, ...sandboxDefaults } = loadSandboxConfig({});
    expect(sandbox).toEqual(sandboxDefaults);
  });

  it('reads an empty URL, number or list as unset', () => {
    const config = loadConfig({
      CARD_INTERFACE_URL: '',
      TOKEN_URL: '',
      PORT: '',
      TRUSTED_PROXIES: '',
      UPSTREAM: '',
    });
    expect(config.port).toBe(4000);
    expect(config.upstream.mode).toBe('embedded');
    expect(config.http.trustedProxies).toEqual([]);
  });
});
