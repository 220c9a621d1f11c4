/**
 * `node bench/micro-crypto.mjs`: what a card's seal (AES-256-GCM) and a request's signature (HMAC-SHA256)
 * cost with the key handed to OpenSSL as raw bytes on every call, against a KeyObject made once (what the
 * vault and the partner client do). Microseconds per call, two rounds each; the ratio is what counts.
 */
import { createCipheriv, createHmac, createSecretKey, randomBytes } from 'node:crypto';

const raw = randomBytes(32);
const keyObject = createSecretKey(raw);
const hex = raw.toString('hex');
const N = 100_000;

function seal(key) {
  const t = performance.now();
  for (let i = 0; i < N; i++) {
    const c = createCipheriv('aes-256-gcm', key, randomBytes(12));
    c.setAAD(Buffer.from('card-id/order-id/code'));
    Buffer.concat([c.update('ABCD-1234-EFGH-5678', 'utf8'), c.final()]);
    c.getAuthTag();
  }
  return ((performance.now() - t) / N) * 1000;
}

function sign(key) {
  const t = performance.now();
  for (let i = 0; i < N; i++) {
    createHmac('sha256', typeof key === 'string' ? Buffer.from(key, 'hex') : key).update('POST+https://partner/partners/v1/cards+{"gift_card_code":"X","amount":5000}+1764115200', 'utf8').digest('hex');
  }
  return ((performance.now() - t) / N) * 1000;
}

for (let round = 1; round <= 2; round++) {
  const [sr, sk, hr, hk] = [seal(raw), seal(keyObject), sign(hex), sign(keyObject)];
  console.log(`round ${round}: seal ${sr.toFixed(1)} -> ${sk.toFixed(1)} us (${(sk / sr).toFixed(2)}x), sign ${hr.toFixed(1)} -> ${hk.toFixed(1)} us (${(hk / hr).toFixed(2)}x)`);
}
