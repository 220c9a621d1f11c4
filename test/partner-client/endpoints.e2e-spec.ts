import { randomUUID } from 'node:crypto';
import { cardsIssued, pollUntilFinished, useSimulatorAndClient, valueOf } from './support/client';

// Spec, Endpoints: every endpoint through PartnerClient answers `success` with the spec's resource, typed.

const { sim, client } = useSimulatorAndClient();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const OFFSET_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$/;

describe('GET /gift_cards: a JSON array of Gift card objects (no wrapper)', () => {
  it('answers success with every gift card of the catalog, both facial_values shapes', async () => {
    const outcome = await client.listGiftCards();
    expect(outcome).toMatchObject({ kind: 'success', httpStatus: 200 });
    const cards = valueOf(outcome);
    expect(Array.isArray(cards)).toBe(true);
    expect(cards.map((g) => g.code).sort()).toEqual(
      ['ACME-BOOKS-FIXED', 'EURO-TRAVEL-REGION', 'FAST-FREE', 'NOVA-GAMES-FREE', 'SOLD-OUT-FIXED', 'STG-BROKEN'].sort(),
    );
    const byCode = new Map(cards.map((g) => [g.code, g]));
    expect(byCode.get('ACME-BOOKS-FIXED')!.facial_values).toEqual({ type: 'fixed', amounts: [1000, 2500, 5000, 10000] });
    expect(byCode.get('NOVA-GAMES-FREE')!.facial_values).toEqual({
      type: 'free',
      min_amount: 500,
      max_amount: 50000,
      step_amount: 100,
    });
  });
});

describe('GET /gift_cards/:id: a single Gift card object (no wrapper)', () => {
  it('answers the gift card with every field of the spec passed through', async () => {
    const giftCard = valueOf(await client.getGiftCard('EURO-TRAVEL-REGION'));
    expect(giftCard).toMatchObject({
      code: 'EURO-TRAVEL-REGION',
      name: expect.any(String),
      brand: expect.any(String),
      barcode_symbology: 'ean13',
      online_usable: expect.any(Boolean),
      validity_period: 540,
      code_pin: true,
      discount: 5,
      next_discounts: [{ value: 6.5, date: '2027-06-01T00:00:00.000+02:00' }],
      facial_values: { type: 'fixed', amounts: [2000, 5000] },
      country_name: 'Europe',
      country_code: 'EU',
      logo_url: expect.any(String),
    });
    expect(giftCard.countries?.map((c) => c.country_code)).toEqual(['FR', 'DE', 'ES', 'IT']);
  });

  it('a gift card without country answers null country fields', async () => {
    expect(valueOf(await client.getGiftCard('NOVA-GAMES-FREE'))).toMatchObject({ country_name: null, country_code: null });
  });
});

describe('POST /cards (synchronous pull): 200 { card: Card }, the client answers the Card', () => {
  it('answers the issued card, the same the partner recorded', async () => {
    const requestId = randomUUID();
    const outcome = await client.createCard(requestId, 'ACME-BOOKS-FIXED', 2500);
    expect(outcome).toMatchObject({ kind: 'success', httpStatus: 200 });
    const card = valueOf(outcome);
    expect(card).toMatchObject({ amount: 2500, gift_card_code: 'ACME-BOOKS-FIXED' });
    expect(card.id).toMatch(UUID);
    expect(card.code).toMatch(/^[A-Z0-9]{16}$/);
    expect(card.pin_code).toMatch(/^\d{6}$/);
    expect(card.expire_at).toMatch(OFFSET_TIMESTAMP);
    expect(card.pdf_url).toMatch(/^http:\/\/.+\.pdf$/);
    expect(await cardsIssued(sim)).toEqual([
      expect.objectContaining({ id: card.id, code: card.code, pin_code: card.pin_code, request_id: requestId, via: 'sync' }),
    ]);
  });

  it('a gift card without PIN (code_pin false) answers a card with pin_code null', async () => {
    const card = valueOf(await client.createCard(randomUUID(), 'NOVA-GAMES-FREE', 1200));
    expect(card).toMatchObject({ amount: 1200, gift_card_code: 'NOVA-GAMES-FREE', pin_code: null });
  });
});

describe('GET /cards/:id: 200 { card: Card }', () => {
  it('answers the card issued before, field for field', async () => {
    const issued = valueOf(await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1000));
    const outcome = await client.getCard(issued.id);
    expect(outcome).toMatchObject({ kind: 'success', httpStatus: 200 });
    expect(valueOf(outcome)).toEqual(issued);
  });
});

describe('POST /pull_requests then GET /pull_requests/:request_id: waiting, card null, then success with the card', () => {
  it('creation answers waiting with amount_cents; polling ends in success with a card readable by GET /cards/:id', async () => {
    const requestId = randomUUID();
    const created = valueOf(await client.createPullRequest(requestId, 'EURO-TRAVEL-REGION', 5000));
    expect(created).toMatchObject({ status: 'waiting', request_id: requestId, amount_cents: 5000, card: null });
    expect(created.id).toMatch(UUID);
    expect(created.created_at).toMatch(OFFSET_TIMESTAMP);

    const finished = await pollUntilFinished(client, requestId);
    expect(finished).toMatchObject({ id: created.id, status: 'success', request_id: requestId });
    expect(finished.card).toMatchObject({ amount: 5000, gift_card_code: 'EURO-TRAVEL-REGION' });
    expect(valueOf(await client.getCard(finished.card!.id))).toEqual(finished.card);
    expect(await cardsIssued(sim)).toEqual([expect.objectContaining({ id: finished.card!.id, request_id: requestId, via: 'async' })]);
  });
});

describe('GET /inventories/:id: stocks per facial value, or available_amount "unlimited"', () => {
  it('a limited gift card answers its stocks per facial value', async () => {
    const inventory = valueOf(await client.getInventory('ACME-BOOKS-FIXED'));
    expect(inventory.inventories.gift_card).toMatchObject({ code: 'ACME-BOOKS-FIXED', name: expect.any(String) });
    expect(inventory.inventories.end_to_end_api.enabled).toBe(true);
    expect(inventory.inventories.stocks).toEqual([
      { facial_value: 1000, owned_quantity: 500, shared_quantity: 0 },
      { facial_value: 2500, owned_quantity: 500, shared_quantity: 0 },
      { facial_value: 5000, owned_quantity: 200, shared_quantity: 0 },
      { facial_value: 10000, owned_quantity: 50, shared_quantity: 0 },
    ]);
  });

  it('an unlimited gift card answers available_amount "unlimited"', async () => {
    const inventory = valueOf(await client.getInventory('NOVA-GAMES-FREE'));
    expect(inventory.inventories.end_to_end_api).toEqual({ enabled: true, available_amount: 'unlimited' });
    expect(inventory.inventories.stocks).toEqual([]);
  });

  it('follows the partner stock: a pull takes one card of its facial value', async () => {
    await sim.control.setStock('ACME-BOOKS-FIXED', 3, 5000);
    valueOf(await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 5000));
    const inventory = valueOf(await client.getInventory('ACME-BOOKS-FIXED'));
    expect(inventory.inventories.stocks).toContainEqual({ facial_value: 5000, owned_quantity: 2, shared_quantity: 0 });
  });
});

describe('GET /balance: balance.amount, a decimal number', () => {
  it('answers the balance as a number, and follows the pulls (a card of `amount` draws amount / 100)', async () => {
    await sim.control.setBalance(123.45);
    const before = valueOf(await client.getBalance());
    expect(before).toEqual({ balance: { amount: 123.45 } });
    expect(typeof before.balance.amount).toBe('number');
    valueOf(await client.createCard(randomUUID(), 'FAST-FREE', 2345));
    expect(valueOf(await client.getBalance()).balance.amount).toBeCloseTo(100, 9);
  });
});

describe('Path parameters (gift card code, card ID, request ID) are URL-encoded and signed as sent', () => {
  it('a request ID with a slash, a space and a non-ASCII letter: created, then read back by that ID', async () => {
    const requestId = `order/${randomUUID()} é?x=1`;
    valueOf(await client.createPullRequest(requestId, 'ACME-BOOKS-FIXED', 1000));
    expect(valueOf(await client.getPullRequest(requestId))).toMatchObject({ request_id: requestId });
  });

  it('a gift card code with reserved characters reaches the partner whole (the 404 message names it)', async () => {
    expect(await client.getGiftCard('NO SUCH/CARD?x=1#')).toMatchObject({
      kind: 'definitive',
      code: 'gift_card_not_found',
      message: expect.stringContaining('NO SUCH/CARD?x=1#'),
    });
  });
});
