import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { waitFor } from '@cardpull/testing';
import { KEYS, idemKey, useStack } from '../support/stack';

const ROOT = join(__dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const SECRET = 'shop-callback-secret-0001';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end without blocking this process (the API under test runs in it). */
function run(command: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', (error) => resolve({ code: null, stdout, stderr: `${stderr}${error.message}` }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The last line of a run's output, as JSON (the examples print their result so). */
function result(r: Run): any {
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

describe('examples/: the TypeScript checkout handler and callback receiver, and the Python checkout, against the real API', () => {
  const stack = useStack({ env: { CALLBACK_SECRETS: `shop:${SECRET}` } });
  const apiEnv = () => ({ CARDPULL_URL: stack.apiUrl, CARDPULL_API_KEY: KEYS.shop });

  it('checkout-handler.ts (through tsx) orders the card of a cart and answers it; the same cart again is the same order', async () => {
    const cart = idemKey('c');
    const first = result(await run(process.execPath, [TSX, 'examples/checkout-handler.ts', 'checkout', cart, 'ACME-BOOKS-FIXED', '2500'], apiEnv()));
    expect(first).toEqual({ status: 'completed', order_id: expect.any(String), card: { code: expect.stringMatching(/^[A-Z0-9]{16}$/), pin_code: expect.any(String), expire_at: expect.any(String) } });
    const again = result(await run(process.execPath, [TSX, 'examples/checkout-handler.ts', 'checkout', cart, 'ACME-BOOKS-FIXED', '2500'], apiEnv()));
    expect(again).toEqual(first);
    const stored = await stack.call('GET', `/v1/orders/by-idempotency-key/cart-${cart}`);
    expect([stored.body.order.id, stored.body.order.metadata]).toEqual([first.order_id, { cart_id: cart }]);
    const refused = result(await run(process.execPath, [TSX, 'examples/checkout-handler.ts', 'checkout', idemKey('c'), 'ACME-BOOKS-FIXED', '1234'], apiEnv()));
    expect(refused).toEqual({ status: 'failed', reason: expect.stringMatching(/^invalid_amount: /) });
  });

  it('checkout-handler.ts receive: verifies and prints the callback the worker sends; a forged one is answered 400', async () => {
    let child: ChildProcess | undefined;
    try {
      child = spawn(process.execPath, [TSX, 'examples/checkout-handler.ts', 'receive', '0'], { cwd: ROOT, env: { ...process.env, CARDPULL_CALLBACK_SECRET: SECRET } });
      const lines: string[] = [];
      createInterface({ input: child.stdout! }).on('line', (l) => lines.push(l));
      let stderr = '';
      child.stderr!.on('data', (c) => (stderr += c));
      const url = await waitFor('the receiver to listen', () => {
        if (child!.exitCode !== null) throw new Error(`the receiver exited: ${stderr}`);
        return lines.map((l) => /^listening on (http:\S+)$/.exec(l)?.[1]).find(Boolean);
      }, 30_000);

      const created = await stack.call('POST', '/v1/orders', { body: { gift_card_code: 'FAST-FREE', amount: 500, callback_url: `${url}/hooks/cardpull` }, headers: { 'idempotency-key': idemKey() } });
      expect(created.status).toBe(202);
      const orderId = created.body.order.id as string;
      const event = await waitFor('the verified event', () => lines.map((l) => (l.startsWith('{') ? JSON.parse(l) : null)).find((e) => e?.order_id === orderId), 20_000);
      expect(event).toEqual({ id: expect.any(String), type: 'order.completed', order_id: orderId, status: 'completed' });

      const forged = await fetch(`${url}/hooks/cardpull`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-cardpull-timestamp': String(Math.floor(Date.now() / 1000)), 'x-cardpull-signature': `v1=${'0'.repeat(64)}` },
        body: JSON.stringify({ id: 'evt-forged', type: 'order.completed', status: 'completed', created_at: new Date().toISOString(), order: { id: orderId } }),
      });
      expect([forged.status, await forged.text()]).toEqual([400, 'invalid_signature']);
      expect(lines.some((l) => l.includes('evt-forged'))).toBe(false);
    } finally {
      child?.kill();
    }
  });

  it('checkout.py (python3 with requests) creates and reads back the order; the cart the TypeScript handler ordered is the same order', async () => {
    // The first python3 that has requests: the one on PATH (or $PYTHON), else Debian's (where .ci/run installs
    // python3-requests when the one on PATH lacks it, e.g. a pyenv shim).
    const candidates = [process.env.PYTHON ?? 'python3', '/usr/bin/python3'];
    const probes = await Promise.all(candidates.map((py) => run(py, ['-c', 'import requests'])));
    const python = candidates[probes.findIndex((p) => p.code === 0)];
    if (!python) {
      throw new Error(
        `examples/checkout.py needs python3 with the requests module, and \`python3 -c "import requests"\` failed: ${probes[0]!.stderr.trim()}\n` +
          'Install it: `apt-get install python3-requests` (Debian/Ubuntu; .ci/run does this) or `python3 -m pip install requests`.',
      );
    }
    const cart = idemKey('c');
    const py = result(await run(python, ['examples/checkout.py', cart, 'ACME-BOOKS-FIXED', '1000'], apiEnv()));
    expect(py).toEqual({
      status: 'completed',
      order_id: expect.any(String),
      idempotency_key: `cart-${cart}`,
      card: { code: expect.stringMatching(/^[A-Z0-9]{16}$/), pin_code: expect.any(String), expire_at: expect.any(String) },
    });
    // The same cart through the TypeScript handler: the same request, so the same order and card.
    const ts = result(await run(process.execPath, [TSX, 'examples/checkout-handler.ts', 'checkout', cart, 'ACME-BOOKS-FIXED', '1000'], apiEnv()));
    expect([ts.order_id, ts.card.code]).toEqual([py.order_id, py.card.code]);
    const refused = result(await run(python, ['examples/checkout.py', idemKey('c'), 'NOPE-CARD', '800'], apiEnv()));
    expect(refused).toEqual({ status: 'failed', reason: expect.stringMatching(/^gift_card_not_found: /) });
  });
});
