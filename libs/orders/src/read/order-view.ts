import type { OrderDetail } from './order-reads.repository';
import type { CardRow } from '../model/order.types';
import { Vault, openCardField } from '@cardpull/vault';

export interface OrderView {
  id: string;
  idempotency_key: string;
  client: string;
  status: string;
  mode: string;
  gift_card_code: string;
  amount: number;
  metadata: unknown;
  attempts: {
    request_id: string;
    kind: string;
    state: string;
    partner_status: string | null;
    error: { code: string; message: string } | null;
    call_count: number;
    created_at: string;
    updated_at: string;
  }[];
  card: CardView | null;
  /**
   * Cards the partner issued for this order's request IDs that are not its card: a second card (`surplus`)
   * or a card that does not match the order (`mismatch`, the order needs attention). Nothing the partner
   * billed is hidden, but these are kept for a refund or reuse, not the client's to redeem: always masked
   * (`held`), whatever the caller's scopes. An operator reveals one on the admin order page, audited.
   */
  other_cards: HeldCardView[];
  error: { code: string; message: string } | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export interface CardView {
  id: string;
  /** Null only when the card cannot be opened (`unreadable` says why). */
  code: string | null;
  pin_code: string | null;
  expire_at: string | null;
  amount: number;
  gift_card_code: string;
  pdf_url: string | null;
  /** Present when the card's key is not in CARD_ENCRYPTION_KEYS: why, and what to do. */
  unreadable?: string;
}

/** A card of the order that is not its card, as the Order resource shows it: masked, with why it is there. */
export type HeldCardView = CardView & {
  role: 'surplus' | 'mismatch';
  request_id: string;
  mismatch: string | null;
  /** Always true: kept for a refund or reuse, so its code, PIN and PDF link are masked for every caller. */
  held: true;
};

/** Everything but the last four characters, so a support agent can match a card without seeing it. */
const mask = (secret: string): string => (secret.length <= 4 ? '****' : `${'*'.repeat(secret.length - 4)}${secret.slice(-4)}`);

/**
 * The Order resource of the internal API. Code, PIN and PDF link (which opens the card) are shown only to
 * callers with cards:read (invariant 7); the others see them masked.
 */
export function toCardView(card: CardRow, vault: Vault, canReadCards: boolean): CardView {
  const plain = { id: card.partnerCardId, expire_at: card.expireAt?.toISOString() ?? null, amount: card.amount, gift_card_code: card.giftCardCode };
  if (!vault.canOpen(card.keyId)) {
    // A fault to show, not a crash: the key was removed from CARD_ENCRYPTION_KEYS before vault:reencrypt ran.
    const unreadable = `sealed with key "${card.keyId}", which is not in CARD_ENCRYPTION_KEYS: put it back (after the new one) and run npm run vault:reencrypt`;
    return { ...plain, code: null, pin_code: null, pdf_url: null, unreadable };
  }
  const open = (blob: Buffer, field: 'code' | 'pin' | 'pdf') => openCardField(vault, card, field, blob);
  const code = open(card.codeEnc, 'code');
  // A masked view shows no part of the PIN: it is not even decrypted.
  const pin = !card.pinEnc ? null : canReadCards ? open(card.pinEnc, 'pin') : '****';
  // Sealed since pdf_enc; a row from before still has it in clear (until vault:reencrypt seals it).
  const pdf = card.pdfEnc ? open(card.pdfEnc, 'pdf') : card.pdfUrl;
  return {
    ...plain,
    code: canReadCards ? code : mask(code),
    pin_code: pin,
    pdf_url: pdf === null ? null : canReadCards ? pdf : mask(pdf),
  };
}

/**
 * A surplus or mismatched card: masked as for a caller without cards:read, whoever asks (the client never
 * gets a card that is not its order's; the partner billed it, and it waits for a refund or reuse).
 */
export function toHeldCardView(card: CardRow, vault: Vault): HeldCardView {
  return {
    ...toCardView(card, vault, false),
    role: card.role === 'mismatch' ? 'mismatch' : 'surplus',
    request_id: card.requestId,
    mismatch: card.mismatch,
    held: true,
  };
}

export function toOrderView(detail: OrderDetail, vault: Vault, canReadCards: boolean): OrderView {
  const { order, attempts, card } = detail;
  const err = (code: string | null, message: string | null) => (code ? { code, message: message ?? '' } : null);
  return {
    id: order.id,
    idempotency_key: order.idempotencyKey,
    client: order.client,
    status: order.status,
    mode: order.mode,
    gift_card_code: order.giftCardCode,
    amount: order.amount,
    metadata: order.metadata ?? null,
    attempts: attempts.map((a) => ({
      request_id: a.requestId,
      kind: a.kind,
      state: a.state,
      partner_status: a.partnerStatus,
      error: err(a.errorCode, a.errorMessage),
      call_count: a.callCount,
      created_at: a.createdAt.toISOString(),
      updated_at: a.updatedAt.toISOString(),
    })),
    card: card ? toCardView(card, vault, canReadCards) : null,
    other_cards: detail.otherCards.map((c) => toHeldCardView(c, vault)),
    error: err(order.errorCode, order.errorMessage),
    created_at: order.createdAt.toISOString(),
    updated_at: order.updatedAt.toISOString(),
    completed_at: order.completedAt?.toISOString() ?? null,
  };
}
