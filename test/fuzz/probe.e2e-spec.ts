import { connect } from 'node:net';
import { request } from 'undici';
import { KEYS, idemKey, startStack, type Stack } from '../support/stack';

function raw(url: string, text: string | Buffer): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const s = connect(Number(u.port), u.hostname, () => s.write(text));
    s.on('data', (c) => chunks.push(c));
    s.on('error', (e) => resolve('ERR ' + e.message + ' ' + Buffer.concat(chunks).toString('latin1')));
    s.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    setTimeout(() => s.end(), 1500);
  });
}

describe('probe', () => {
  let stack: Stack;
  beforeAll(async () => { stack = await startStack({ worker: false }); });
  afterAll(async () => { await stack?.close(); });
  it('probes', async () => {
    const post = async (body: string | Buffer, headers: Record<string, string> = {}) => {
      try {
        const r = await request(`${stack.apiUrl}/v1/orders`, { method: 'POST', headers: { authorization: `Bearer ${KEYS.shop}`, 'content-type': 'application/json', 'idempotency-key': idemKey(), ...headers }, body });
        return `${r.statusCode} ${(await r.body.text()).slice(0, 200)}`;
      } catch (e) { return `THROW ${(e as Error).message}`; }
    };
    const out: string[] = [];
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    out.push('deep8000 meta ' + await post(`{"gift_card_code":"ACME-BOOKS-FIXED","amount":2500,"metadata":{"a":${deep(8000)}}}`));
    out.push('deep5000 meta ' + await post(`{"gift_card_code":"ACME-BOOKS-FIXED","amount":2500,"metadata":{"a":${deep(5000)}}}`));
    out.push('deep8000 body ' + await post(deep(8000)));
    out.push('deep8000 code ' + await post(`{"gift_card_code":${deep(8000)},"amount":2500}`));
    out.push('deep8000 unk ' + await post(`{"x":${deep(8000)},"amount":2500}`));
    out.push('open10000 ' + await post('['.repeat(10000)));
    out.push('obj10000 ' + await post('{"a":'.repeat(10000) + '1' + '}'.repeat(10000)));
    out.push('1e400 ' + await post(`{"gift_card_code":"ACME-BOOKS-FIXED","amount":1e400}`));
    out.push('proto ' + await post(`{"gift_card_code":"ACME-BOOKS-FIXED","amount":2500,"__proto__":{"x":1}}`));
    out.push('ctor ' + await post(`{"gift_card_code":"ACME-BOOKS-FIXED","amount":2500,"constructor":{"prototype":{"x":1}}}`));
    out.push('meta proto ' + await post(`{"gift_card_code":"ACME-BOOKS-FIXED","amount":2500,"metadata":{"__proto__":{"x":1}}}`));
    out.push('1MB ' + await post('x'.repeat(1 << 20)));
    out.push('20MB ' + await post('x'.repeat(20 << 20)));
    out.push('no ct ' + await post('{"amount":1}', { 'content-type': '' }));
    out.push('xml ' + await post('{"amount":1}', { 'content-type': 'application/xml' }));
    out.push('utf16 ' + await post(Buffer.from('{"gift_card_code":"ACME-BOOKS-FIXED","amount":2500}', 'utf16le'), { 'content-type': 'application/json; charset=utf-16' }));
    out.push('bom-bad ' + await post('\uFEFF{"amount":1}'));
    out.push('bom2 ' + await post('\uFEFF\uFEFF{"gift_card_code":"ACME-BOOKS-FIXED","amount":2500}'));
    out.push('latin1 key ' + await post('{}', { 'idempotency-key': 'ab\u00e9c' }));
    out.push('ws key ' + await post('{"gift_card_code":"ACME-BOOKS-FIXED","amount":1}', { 'idempotency-key': 'a\tb' }));
    const base = `POST /v1/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEYS.shop}\r\nContent-Type: application/json\r\nConnection: close\r\n`;
    const b = '{"gift_card_code":"ACME-BOOKS-FIXED","amount":2500}';
    out.push('raw CRLF inj dup key ' + await raw(stack.apiUrl, `${base}Idempotency-Key: aaa\r\nIdempotency-Key: bbb\r\nContent-Length: ${b.length}\r\n\r\n${b}`));
    out.push('raw NUL ' + await raw(stack.apiUrl, `${base}Idempotency-Key: a\0b\r\nContent-Length: ${b.length}\r\n\r\n${b}`));
    out.push('raw bare CR ' + await raw(stack.apiUrl, `${base}Idempotency-Key: a\rb\r\nContent-Length: ${b.length}\r\n\r\n${b}`));
    out.push('raw bare LF ' + await raw(stack.apiUrl, `${base}Idempotency-Key: a\nX: b\r\nContent-Length: ${b.length}\r\n\r\n${b}`));
    out.push('raw utf8 ' + await raw(stack.apiUrl, Buffer.concat([Buffer.from(`${base}Idempotency-Key: a`), Buffer.from('€', 'utf8'), Buffer.from(`\r\nContent-Length: ${b.length}\r\n\r\n${b}`)])));
    out.push('raw CL mismatch short ' + await raw(stack.apiUrl, `${base}Idempotency-Key: x1\r\nContent-Length: 5\r\n\r\n${b}`));
    out.push('raw CL mismatch long ' + await raw(stack.apiUrl, `${base}Idempotency-Key: x2\r\nContent-Length: ${b.length + 10}\r\n\r\n${b}`));
    out.push('raw CL+TE ' + await raw(stack.apiUrl, `${base}Idempotency-Key: x3\r\nContent-Length: ${b.length}\r\nTransfer-Encoding: chunked\r\n\r\n${b}`));
    out.push('raw 2CL ' + await raw(stack.apiUrl, `${base}Idempotency-Key: x4\r\nContent-Length: ${b.length}\r\nContent-Length: 3\r\n\r\n${b}`));
    out.push('raw 300 key ' + await raw(stack.apiUrl, `${base}Idempotency-Key: ${'k'.repeat(300)}\r\nContent-Length: ${b.length}\r\n\r\n${b}`));
    out.push('raw empty key ' + await raw(stack.apiUrl, `${base}Idempotency-Key: \r\nContent-Length: ${b.length}\r\n\r\n${b}`));
    console.log(out.join('\n'));
  }, 120000);
});
