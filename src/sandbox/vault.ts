import { randomBase62 } from './ids.ts';

/**
 * The sandbox's alias vault (contract §6; formats in docs/gap-decisions.md, "Identifiers and aliases"):
 * per tenant, PAN ↔ `tok_sandbox_…` alias, CVC ↔ `tok_sandbox_…` alias, and PAN ↔ format-preserving
 * alias for account updater v1. In memory only. Aliases of one vault never resolve in another.
 */

/** `tok_sandbox_` + 22 Base62 characters. */
export const TOK_ALIAS_PATTERN = /^tok_sandbox_[0-9A-Za-z]{22}$/;

/**
 * Format-preserving alias form accepted by v1 `number` (spec, Card check request): six leading digits,
 * up to nine characters, a letter, up to nine characters, four trailing digits.
 */
export const FORMAT_PRESERVING_ALIAS_PATTERN = /^\d{6}[0-9A-Za-z]{0,9}[A-Za-z][0-9A-Za-z]{0,9}\d{4}$/;

interface TenantVault {
  panToTok: Map<string, string>;
  panToFormatPreserving: Map<string, string>;
  /** Every alias of the tenant → what it stands for. */
  aliases: Map<string, { kind: 'pan' | 'cvc'; value: string }>;
}

/** The alias store of every tenant. */
export class AliasVault {
  readonly #tenants = new Map<string, TenantVault>();

  #tenant(vault: string): TenantVault {
    let tenant = this.#tenants.get(vault);
    if (!tenant) {
      tenant = { panToTok: new Map(), panToFormatPreserving: new Map(), aliases: new Map() };
      this.#tenants.set(vault, tenant);
    }
    return tenant;
  }

  #unusedAlias(tenant: TenantVault, make: () => string): string {
    for (;;) {
      const alias = make();
      if (!tenant.aliases.has(alias)) return alias;
    }
  }

  /**
   * The `tok_sandbox_…` alias of a PAN in a vault; the same PAN in the same vault keeps its alias.
   * @param pan digits only, already validated.
   */
  panAlias(vault: string, pan: string): string {
    const tenant = this.#tenant(vault);
    const existing = tenant.panToTok.get(pan);
    if (existing) return existing;
    const alias = this.#unusedAlias(tenant, () => `tok_sandbox_${randomBase62(22)}`);
    tenant.panToTok.set(pan, alias);
    tenant.aliases.set(alias, { kind: 'pan', value: pan });
    return alias;
  }

  /** A new `tok_sandbox_…` alias for a CVC (one per submission: CVCs are not unique). */
  cvcAlias(vault: string, cvc: string): string {
    const tenant = this.#tenant(vault);
    const alias = this.#unusedAlias(tenant, () => `tok_sandbox_${randomBase62(22)}`);
    tenant.aliases.set(alias, { kind: 'cvc', value: cvc });
    return alias;
  }

  /**
   * The format-preserving alias of a PAN for v1 `number`: first six digits + seven Base62 characters
   * with at least one letter + last four digits (17 characters). Same PAN, same vault, same alias.
   */
  formatPreservingAlias(vault: string, pan: string): string {
    const tenant = this.#tenant(vault);
    const existing = tenant.panToFormatPreserving.get(pan);
    if (existing) return existing;
    const alias = this.#unusedAlias(tenant, () => {
      let middle = randomBase62(7);
      while (!/[A-Za-z]/.test(middle)) middle = randomBase62(7);
      return `${pan.slice(0, 6)}${middle}${pan.slice(-4)}`;
    });
    tenant.panToFormatPreserving.set(pan, alias);
    tenant.aliases.set(alias, { kind: 'pan', value: pan });
    return alias;
  }

  /** The PAN behind a `tok_sandbox_…` or format-preserving alias of this vault, or `undefined`. */
  resolvePan(vault: string, alias: string): string | undefined {
    const entry = this.#tenants.get(vault)?.aliases.get(alias);
    return entry?.kind === 'pan' ? entry.value : undefined;
  }

  /** The CVC behind a `tok_sandbox_…` CVC alias of this vault, or `undefined`. */
  resolveCvc(vault: string, alias: string): string | undefined {
    const entry = this.#tenants.get(vault)?.aliases.get(alias);
    return entry?.kind === 'cvc' ? entry.value : undefined;
  }
}
