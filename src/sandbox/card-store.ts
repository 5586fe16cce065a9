/**
 * In-memory store of the sandbox's saved cards of one area (card interface, account updater v1), all
 * vaults, keyed by card id. A card of another vault is treated as absent, as the upstream does
 * (contract §2: a card of another vault answers 404).
 */
export class VaultCardStore<Card extends { id: string; vault: string; pan: string }> {
  /** Saved cards by {@link keyOf} (the card id unless a subclass keys by vault too). */
  readonly cards = new Map<string, Card>();

  /** Map key of a card: its id (ids are unique across vaults unless a subclass says otherwise). */
  protected keyOf(_vault: string, id: string): string {
    return id;
  }

  /** Saves (or replaces) a card under {@link keyOf}. */
  save(card: Card): void {
    this.cards.set(this.keyOf(card.vault, card.id), card);
  }

  /** The card when saved in this vault; another vault's card is treated as absent. */
  find(vault: string, id: string): Card | undefined {
    const card = this.cards.get(this.keyOf(vault, id));
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
