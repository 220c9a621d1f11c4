/**
 * A checkout team's use of @cardpull/client: the checkout handler (one gift card per cart, the card in the
 * answer when it comes in time) and the receiver of cardpull's callbacks (for the orders that took longer).
 *
 *   CARDPULL_URL=http://127.0.0.1:3000 CARDPULL_API_KEY=... \
 *     npx tsx examples/checkout-handler.ts checkout <cart id> <gift card code> <amount>
 *   CARDPULL_CALLBACK_SECRET=... npx tsx examples/checkout-handler.ts receive <port>
 *
 * `checkout` prints its result as one JSON line; `receive` prints `listening on <url>`, then each verified
 * event as one JSON line.
 */
import { createServer, type IncomingMessage, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CallbackVerificationError, CardpullClient, CardpullError, verifyCallback, type CallbackEvent, type Order } from '@cardpull/client';

export interface Cart {
  id: string;
  gift_card_code: string;
  /** Minor units (cents). */
  amount: number;
}

export type CheckoutResult =
  | { status: 'completed'; order_id: string; card: { code: string | null; pin_code: string | null; expire_at: string | null } }
  /** Not final yet: the callback (or getOrder) will tell. */
  | { status: 'pending'; order_id: string }
  | { status: 'failed'; order_id?: string; reason: string };

/**
 * One order per cart: the cart id is the Idempotency-Key, so a checkout that runs twice (a double click, a
 * retried job) gets the same order, never a second card. Waits up to 20 s for the card.
 */
export async function checkout(cardpull: CardpullClient, cart: Cart): Promise<CheckoutResult> {
  let order: Order;
  try {
    order = await cardpull.createOrder({ gift_card_code: cart.gift_card_code, amount: cart.amount, metadata: { cart_id: cart.id } }, { idempotencyKey: `cart-${cart.id}`, wait: 20 });
  } catch (error) {
    // A refusal (bad gift card or amount, a limit): tell the shopper. No answer at all: the order may exist,
    // and running this checkout again with the same cart finds it.
    if (error instanceof CardpullError) return { status: 'failed', reason: `${error.code}: ${error.message}` };
    throw error;
  }
  if (order.status === 'completed' && order.card) {
    return { status: 'completed', order_id: order.id, card: { code: order.card.code, pin_code: order.card.pin_code, expire_at: order.card.expire_at } };
  }
  if (order.status === 'failed') return { status: 'failed', order_id: order.id, reason: `${order.error?.code}: ${order.error?.message}` };
  return { status: 'pending', order_id: order.id };
}

/**
 * The HTTP handler of the callback URL: verifies each callback over its raw body, hands every event to
 * `onEvent` once (the event id is the same on every redelivery), answers 204; a refused one 400.
 */
export function callbackReceiver(secret: string | string[], onEvent: (event: CallbackEvent) => Promise<void> | void): RequestListener {
  const handled = new Set<string>(); // keep this in your database in production
  return (req, res) => {
    void readBody(req)
      .then(async (raw) => {
        const event = verifyCallback(raw, req.headers, secret, { toleranceSeconds: 300 });
        if (!handled.has(event.id)) {
          await onEvent(event);
          handled.add(event.id);
        }
        res.writeHead(204).end();
      })
      .catch((error: unknown) => {
        res.writeHead(error instanceof CallbackVerificationError ? 400 : 500, { 'content-type': 'text/plain' }).end(error instanceof CallbackVerificationError ? error.code : 'error');
      });
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === 'checkout') {
    const [id, giftCardCode, amount] = args;
    if (!id || !giftCardCode || !amount) throw new Error('usage: checkout <cart id> <gift card code> <amount>');
    const cardpull = new CardpullClient({ baseUrl: env('CARDPULL_URL'), apiKey: env('CARDPULL_API_KEY') });
    process.stdout.write(`${JSON.stringify(await checkout(cardpull, { id, gift_card_code: giftCardCode, amount: Number(amount) }))}\n`);
  } else if (command === 'receive') {
    const server = createServer(callbackReceiver(env('CARDPULL_CALLBACK_SECRET'), (event) => {
      // balance.low and catalog.changed (a subscribed client): the partner account's float runs low, the partner's
      // catalog changed (a withdrawn gift card: stop offering it); every other event is an order's.
      if (event.type === 'balance.low') process.stdout.write(`${JSON.stringify({ id: event.id, type: event.type, state: event.state, runway_hours: event.runway_hours })}\n`);
      else if (event.type === 'catalog.changed') process.stdout.write(`${JSON.stringify({ id: event.id, type: event.type, changes: event.changes.map((c) => `${c.kind} ${c.gift_card_code}`) })}\n`);
      else process.stdout.write(`${JSON.stringify({ id: event.id, type: event.type, order_id: event.order.id, status: event.status })}\n`);
    }));
    server.listen(Number(args[0] ?? 0), '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
  } else {
    throw new Error('usage: checkout-handler.ts checkout <cart id> <gift card code> <amount> | receive <port>');
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
