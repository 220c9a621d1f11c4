import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { EncryptionKey } from '@cardpull/config';

const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface Sealed {
  keyId: string;
  /** version (1 byte) | nonce (12) | ciphertext | GCM tag (16) */
  blob: Buffer;
}

/**
 * Invariant 7: card codes and PINs at rest are AES-256-GCM ciphertexts with a random nonce, tagged with the
 * id of the key that sealed them so keys can rotate. The first key of CARD_ENCRYPTION_KEYS seals; any
 * listed key opens. `context` (e.g. "<card id>/code") is authenticated but not stored, so a ciphertext
 * copied onto another card or field does not open.
 */
export class Vault {
  private readonly keys: Map<string, Buffer>;
  readonly activeKeyId: string;

  constructor(keys: readonly EncryptionKey[]) {
    if (!keys.length) throw new Error('Vault needs at least one key');
    this.keys = new Map(keys.map((k) => [k.id, k.key]));
    this.activeKeyId = keys[0]!.id;
  }

  seal(plaintext: string, context: string): Sealed {
    const key = this.keys.get(this.activeKeyId)!;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { keyId: this.activeKeyId, blob: Buffer.concat([Buffer.from([VERSION]), nonce, ciphertext, cipher.getAuthTag()]) };
  }

  /** Whether a value sealed with `keyId` can be opened (the key is still listed). */
  canOpen(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  open(sealed: Sealed, context: string): string {
    const key = this.keys.get(sealed.keyId);
    if (!key) throw new Error(`no key "${sealed.keyId}" in CARD_ENCRYPTION_KEYS to open this card`);
    const { blob } = sealed;
    if (blob.length < 1 + NONCE_BYTES + TAG_BYTES || blob[0] !== VERSION) throw new Error('not a sealed value of this vault');
    const nonce = blob.subarray(1, 1 + NONCE_BYTES);
    const tag = blob.subarray(blob.length - TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(blob.subarray(1 + NONCE_BYTES, blob.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

/** AAD of a card's fields. */
export const cardContext = (cardId: string, field: 'code' | 'pin' | 'pdf'): string => `card/${cardId}/${field}`;
