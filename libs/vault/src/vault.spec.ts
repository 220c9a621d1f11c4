import { randomBytes } from 'node:crypto';
import { Vault, cardContext } from './vault';

const k = (id: string) => ({ id, key: randomBytes(32) });

describe('invariant 7: card secrets are AES-256-GCM with a key id', () => {
  const old = k('k-old');
  const current = k('k-new');

  it('seals with the first key and opens again', () => {
    const vault = new Vault([current, old]);
    const sealed = vault.seal('CODE-123', cardContext('c1', 'code'));
    expect(sealed.keyId).toBe('k-new');
    expect(sealed.blob.includes(Buffer.from('CODE-123'))).toBe(false);
    expect(vault.open(sealed, cardContext('c1', 'code'))).toBe('CODE-123');
  });

  it('uses a random nonce: the same code seals differently each time', () => {
    const vault = new Vault([current]);
    const a = vault.seal('SAME', 'ctx').blob;
    const b = vault.seal('SAME', 'ctx').blob;
    expect(a.equals(b)).toBe(false);
  });

  it('opens cards sealed under an older key still listed (rotation)', () => {
    const sealedByOld = new Vault([old]).seal('OLD-CODE', 'ctx');
    expect(new Vault([current, old]).open(sealedByOld, 'ctx')).toBe('OLD-CODE');
    expect(() => new Vault([current]).open(sealedByOld, 'ctx')).toThrow(/no key "k-old"/);
  });

  it('refuses a tampered ciphertext or one moved to another card', () => {
    const vault = new Vault([current]);
    const sealed = vault.seal('CODE', cardContext('c1', 'code'));
    expect(() => vault.open(sealed, cardContext('c2', 'code'))).toThrow();
    const tampered = Buffer.from(sealed.blob);
    tampered[15] = tampered[15]! ^ 1;
    expect(() => vault.open({ keyId: sealed.keyId, blob: tampered }, cardContext('c1', 'code'))).toThrow();
  });
});
