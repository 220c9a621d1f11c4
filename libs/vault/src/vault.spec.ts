import { createCipheriv, randomBytes } from 'node:crypto';
import { Vault, cardContext, legacyCardContext, openCardField, sealCardField } from './vault';

const k = (id: string) => ({ id, key: randomBytes(32) });

describe('invariant 7: card secrets are AES-256-GCM with a key id', () => {
  const old = k('k-old');
  const current = k('k-new');

  it('seals with the first key and opens again', () => {
    const vault = new Vault([current, old]);
    const sealed = vault.seal('CODE-123', cardContext('c1', 'code', 'o1'));
    expect(sealed.keyId).toBe('k-new');
    expect(sealed.blob.includes(Buffer.from('CODE-123'))).toBe(false);
    expect(vault.open(sealed, cardContext('c1', 'code', 'o1'))).toBe('CODE-123');
  });

  it('uses a random nonce: the same code seals differently each time', () => {
    const vault = new Vault([current]);
    const a = vault.seal('SAME', 'ctx').blob;
    const b = vault.seal('SAME', 'ctx').blob;
    expect(a.equals(b)).toBe(false);
  });

  it('never uses a nonce twice, across the batches nonces are drawn in (and each seal still opens)', () => {
    const vault = new Vault([current]);
    const sealed = Array.from({ length: 1_000 }, (_, i) => vault.seal(`CODE-${i}`, `ctx-${i}`));
    const nonces = new Set(sealed.map((s) => s.blob.subarray(1, 13).toString('hex')));
    expect(nonces.size).toBe(1_000);
    expect(sealed.map((s, i) => vault.open(s, `ctx-${i}`))).toEqual(Array.from({ length: 1_000 }, (_, i) => `CODE-${i}`));
  });

  it('opens cards sealed under an older key still listed (rotation)', () => {
    const sealedByOld = new Vault([old]).seal('OLD-CODE', 'ctx');
    expect(new Vault([current, old]).open(sealedByOld, 'ctx')).toBe('OLD-CODE');
    expect(() => new Vault([current]).open(sealedByOld, 'ctx')).toThrow(/no key "k-old"/);
  });

  it('refuses a tampered ciphertext or one moved to another card', () => {
    const vault = new Vault([current]);
    const sealed = vault.seal('CODE', cardContext('c1', 'code', 'o1'));
    expect(() => vault.open(sealed, cardContext('c2', 'code', 'o1'))).toThrow();
    const tampered = Buffer.from(sealed.blob);
    tampered[15] = tampered[15]! ^ 1;
    expect(() => vault.open({ keyId: sealed.keyId, blob: tampered }, cardContext('c1', 'code', 'o1'))).toThrow();
  });

  it('refuses a ciphertext moved onto another order (the context binds the order too)', () => {
    const vault = new Vault([current]);
    const sealed = sealCardField(vault, { id: 'c1', orderId: 'order-a' }, 'code', 'CODE');
    expect(openCardField(vault, { id: 'c1', orderId: 'order-a', keyId: sealed.keyId }, 'code', sealed.blob)).toBe('CODE');
    expect(() => openCardField(vault, { id: 'c1', orderId: 'order-b', keyId: sealed.keyId }, 'code', sealed.blob)).toThrow();
  });

  it('still opens a value sealed before the order was bound (version 1, card and field only)', () => {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', current.key, nonce);
    cipher.setAAD(Buffer.from(legacyCardContext('c1', 'pin'), 'utf8'));
    const body = Buffer.concat([cipher.update('1234', 'utf8'), cipher.final()]);
    const blob = Buffer.concat([Buffer.from([1]), nonce, body, cipher.getAuthTag()]);
    const vault = new Vault([current]);
    expect(openCardField(vault, { id: 'c1', orderId: 'any-order', keyId: current.id }, 'pin', blob)).toBe('1234');
    expect(() => openCardField(vault, { id: 'c2', orderId: 'any-order', keyId: current.id }, 'pin', blob)).toThrow();
  });
});
