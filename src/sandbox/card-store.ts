/**
 * In-memory store of the sandbox's saved cards of one area (card interface, account updater v1), all
 * vaults, keyed by card id. A card of another vault is treated as absent, as the upstream does
 * (contract §2: a card of another vault answers 404).
 */
export class VaultCardStore<Card extends { id: string; vault: string; pan: string }> {
  readonly cards = new Map<string, Card>();

  /** The card when saved in this vault; another vault's card is treated as absent. */
  find(vault: string, id: string): Card | undefined {
    const card = this.cards.get(id);
    return card && card.vault === vault ? card : undefined;
  }

  /** True when some card of this vault with this PAN satisfies `test`. */
  someWithPan(vault: string, pan: string, test: (card: Card) => boolean): boolean {
    for (const card of this.cards.values()) {
      if (card.vault === vault && card.pan === pan && test(card)) return true;
    }
    return false;
  }
}
