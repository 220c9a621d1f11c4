import { createCipheriv, createDecipheriv, createSecretKey, randomFillSync, type KeyObject } from 'node:crypto';
import type { EncryptionKey } from '@cardpull/config';

/** 2: the context binds the card's order too (cardContext); 1: sealed before, opened with legacyCardContext. */
const VERSION = 2;
const LEGACY_VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const VERSION_BYTE = Buffer.from([VERSION]);

/**
 * Random nonces drawn from the CSPRNG a batch at a time (one call per 256 seals, as Node's own randomUUID
 * keeps a cache), each handed out once: a fresh buffer per batch, never refilled in place. Drawing 12 bytes
 * per seal was a synchronous CSPRNG call for each of a card's three fields.
 */
const NONCES_PER_BATCH = 256;
let nonces = Buffer.alloc(0);
let nonceAt = 0;
function nextNonce(): Buffer {
  if (nonceAt + NONCE_BYTES > nonces.length) {
    nonces = randomFillSync(Buffer.allocUnsafe(NONCES_PER_BATCH * NONCE_BYTES));
    nonceAt = 0;
  }
  return nonces.subarray(nonceAt, (nonceAt += NONCE_BYTES));
}

export interface Sealed {
  keyId: string;
  /** version (1 byte: 2, or 1 before the order was bound) | nonce (12) | ciphertext | GCM tag (16) */
  blob: Buffer;
}

/**
 * Invariant 7: card codes and PINs at rest are AES-256-GCM ciphertexts with a random nonce, tagged with the
 * id of the key that sealed them so keys can rotate. The first key of CARD_ENCRYPTION_KEYS seals; any
 * listed key opens. `context` (e.g. "<card id>/code") is authenticated but not stored, so a ciphertext
 * copied onto another card or field does not open.
 */
export class Vault {
  /** KeyObjects made once (not a raw key handed to OpenSSL again for every card). */
  private readonly keys: Map<string, KeyObject>;
  readonly activeKeyId: string;

  constructor(keys: readonly EncryptionKey[]) {
    if (!keys.length) throw new Error('Vault needs at least one key');
    this.keys = new Map(keys.map((k) => [k.id, createSecretKey(k.key)]));
    this.activeKeyId = keys[0]!.id;
  }

  seal(plaintext: string, context: string): Sealed {
    const key = this.keys.get(this.activeKeyId)!;
    const nonce = nextNonce();
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = cipher.update(plaintext, 'utf8');
    const last = cipher.final();
    return { keyId: this.activeKeyId, blob: Buffer.concat([VERSION_BYTE, nonce, ciphertext, last, cipher.getAuthTag()]) };
  }

  /** Whether a value sealed with `keyId` can be opened (the key is still listed). */
  canOpen(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  /** `legacyContext`: the context a value sealed before version 2 was bound to (defaults to `context`). */
  open(sealed: Sealed, context: string, legacyContext = context): string {
    const key = this.keys.get(sealed.keyId);
    if (!key) throw new Error(`no key "${sealed.keyId}" in CARD_ENCRYPTION_KEYS to open this card`);
    const { blob } = sealed;
    if (blob.length < 1 + NONCE_BYTES + TAG_BYTES || (blob[0] !== VERSION && blob[0] !== LEGACY_VERSION)) throw new Error('not a sealed value of this vault');
    if (blob[0] === LEGACY_VERSION) context = legacyContext;
    const nonce = blob.subarray(1, 1 + NONCE_BYTES);
    const tag = blob.subarray(blob.length - TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(blob.subarray(1 + NONCE_BYTES, blob.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

export type CardField = 'code' | 'pin' | 'pdf';

/** AAD of a card's field: bound to the card and its order, so a ciphertext copied onto another card, field or order does not open. */
export const cardContext = (cardId: string, field: CardField, orderId: string): string => `card/${cardId}/${field}/order/${orderId}`;
/** AAD of values sealed before the order was bound (version 1). */
export const legacyCardContext = (cardId: string, field: CardField): string => `card/${cardId}/${field}`;

/** Seals one field of a card (AAD: card, field, order). */
export const sealCardField = (vault: Vault, card: { id: string; orderId: string }, field: CardField, plaintext: string): Sealed =>
  vault.seal(plaintext, cardContext(card.id, field, card.orderId));

/** Opens one field of a card, sealed now or before the order was bound. */
export const openCardField = (vault: Vault, card: { id: string; orderId: string; keyId: string }, field: CardField, blob: Buffer): string =>
  vault.open({ keyId: card.keyId, blob }, cardContext(card.id, field, card.orderId), legacyCardContext(card.id, field));
