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
    // Each variable is the last line of its paragraph: `# NAME=default`.
    const listed = committed
      .split('\n\n')
      .map((paragraph) => /^# ([A-Z][A-Z0-9_]*)=\S*$/.exec(paragraph.trim().split('\n').at(-1) ?? '')?.[1])
      .filter(Boolean);
    expect(listed).toEqual(names);
    for (const shape of shapes) {
      for (const [name, schema] of Object.entries(shape)) expect(schema.description, name).toMatch(/\S/);
    }
    expect(committed).toContain('# Port of the sandbox; 0 picks a free port.\n# SANDBOX_PORT=4010\n');
    expect(committed).toContain('\n# UPSTREAM_PROXY_AREAS=account-updater,network-tokens\n');
  });

  it('shows the defaults the settings take: uncommented, the file loads the configuration of an empty environment', () => {
    const withoutSecret = <T extends { webhooks: { secrets: string[] } }>({ webhooks, ...rest }: T) => ({
      ...rest,
      webhooks: { ...webhooks, secrets: webhooks.secrets.length },
    });
    // A variable's line ends its paragraph (descriptions may mention NAME=value too).
    const settingLine = /^# ([A-Z][A-Z0-9_]*)=(\S*)$(?=\n(?:\n|$))/gm;
    for (const file of [committed.replace(settingLine, '$1=$2'), committed.replace(settingLine, '$1=')]) {
      const env = parseEnv(file);
      expect(Object.keys(env)).toContain('CARD_INTERFACE_URL');
      expect(withoutSecret(loadConfig(env))).toEqual(withoutSecret(loadConfig({})));
      const { webhookSecret: _fileSecret, ...sandbox } = loadSandboxConfig({ ...env, HOST: undefined });
      const { webhookSecret: _defaultSecret, ...sandboxDefaults } = loadSandboxConfig({});
      expect(sandbox).toEqual(sandboxDefaults);
    }
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
