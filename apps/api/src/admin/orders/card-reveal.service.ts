import { Injectable } from '@nestjs/common';
import { CardRevealRepository, toCardView, type CardView } from '@cardpull/orders';
import { Vault } from '@cardpull/vault';

/** A held card opened for one operator's request. */
export interface RevealedCard {
  orderId: string;
  role: 'surplus' | 'mismatch';
  requestId: string;
  mismatch: string | null;
  reason: string;
  card: CardView;
}

export type RevealResult = { ok: true; revealed: RevealedCard } | { ok: false; message: string };

/**
 * Opens a card kept for a refund or reuse (surplus, mismatch) for an admin, and records it on the order's
 * timeline (`card_revealed`, admin:<user>, the partner card id and the reason). The card is opened first
 * and shown only once the entry is written: no reveal goes unrecorded, and a card that cannot be opened
 * records nothing.
 */
@Injectable()
export class CardReveals {
  constructor(
    private readonly repo: CardRevealRepository,
    private readonly vault: Vault,
  ) {}

  async reveal(orderId: string, partnerCardId: string, user: string, reason: string): Promise<RevealResult> {
    const row = await this.repo.heldCard(orderId, partnerCardId);
    const notHeld = `Order ${orderId} keeps no card ${partnerCardId} for a refund or reuse (only a surplus or mismatched card can be revealed here)`;
    if (!row) return { ok: false, message: notHeld };
    const card = toCardView(row, this.vault, true);
    if (card.unreadable) return { ok: false, message: `Card ${partnerCardId} cannot be opened: ${card.unreadable}` };
    if (!(await this.repo.recordReveal(orderId, partnerCardId, `admin:${user}`, reason))) return { ok: false, message: notHeld };
    return { ok: true, revealed: { orderId, role: row.role === 'mismatch' ? 'mismatch' : 'surplus', requestId: row.requestId, mismatch: row.mismatch, reason, card } };
  }
}
