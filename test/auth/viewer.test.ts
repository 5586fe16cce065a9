import { describe, expect, it } from 'vitest';
import { resolveVault, VaultAccessError, type Viewer } from '../../src/auth/viewer.ts';

const viewerOf = (vaults: string[]): Viewer => ({
  subject: 'dev-user',
  scopes: new Set(['cards:read']),
  vaults,
  expiresAt: Date.now() + 60_000,
});

function accessError(run: () => unknown): VaultAccessError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(VaultAccessError);
    return error as VaultAccessError;
  }
  throw new Error('expected a VaultAccessError');
}

describe('resolveVault', () => {
  it("uses the token's only vault when none is requested", () => {
    expect(resolveVault(viewerOf(['tntsandbox1']))).toBe('tntsandbox1');
  });

  it('returns a requested vault the token grants', () => {
    expect(resolveVault(viewerOf(['tntsandbox1']), 'tntsandbox1')).toBe('tntsandbox1');
    expect(resolveVault(viewerOf(['tntsandbox1', 'tntsandbox2']), 'tntsandbox2')).toBe('tntsandbox2');
  });

  it('refuses a vault the token does not grant with vault-not-allowed', () => {
    const error = accessError(() => resolveVault(viewerOf(['tntsandbox1']), 'tntsandbox2'));
    expect(error.code).toBe('vault-not-allowed');
    expect(error.message).toBe('The requested vault is not granted by the client token');
  });

  it('asks for a vault when the token grants several and none is requested', () => {
    const error = accessError(() => resolveVault(viewerOf(['tntsandbox1', 'tntsandbox2'])));
    expect(error.code).toBe('vault-required');
    expect(error.message).toBe('The client token grants several vaults: name the vault to use');
  });
});
