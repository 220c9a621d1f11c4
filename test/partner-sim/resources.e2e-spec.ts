import { useSimulator } from '../support/simulator';
import { createPullRequest, followPullRequest, get, pullSync } from './support/partner';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Timestamp with UTC offset, millisecond precision. */
const TS_MS_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;
const DAY_MS = 86_400_000;

const sim = useSimulator({ SIM_INITIAL_BALANCE: '2500.50' });

/** Every field of the spec's Gift card resource, with its type. */
function expectGiftCardShape(gc: Record<string, unknown>): void {
  expect(gc).toEqual(
    expect.objectContaining({
      name: expect.any(String),
      code: expect.any(String),
      brand: expect.any(String),
      barcode_symbology: expect.any(String),
      online_usable: expect.any(Boolean),
      offline_usable: expect.any(Boolean),
      validity_period: expect.any(Number),
      cumulative_online: expect.any(Boolean),
      cumulative_online_limit: expect.any(Number),
      cumulative_offline: expect.any(Boolean),
      cumulative_offline_limit: expect.any(Number),
      splittable_online: expect.any(Boolean),
      splittable_offline: expect.any(Boolean),
      code_pin: expect.any(Boolean),
      term_of_use: expect.any(String),
      discount: expect.any(Number),
      next_discounts: expect.any(Array),
      facial_values: expect.objectContaining({ type: expect.stringMatching(/^(fixed|free)$/) }),
      logo_url: expect.stringMatching(/^https?:\/\//),
      logo_square_url: expect.stringMatching(/^https?:\/\//),
    }),
  );
  for (const key of ['how_to_use_online', 'how_to_use_offline', 'country_name', 'country_code']) {
    expect(key in gc && (gc[key] === null || typeof gc[key] === 'string')).toBe(true);
  }
  expect(Number.isInteger(gc.validity_period)).toBe(true);
  for (const d of gc.next_discounts as { value: unknown; date: unknown }[]) {
    expect(d).toEqual({ value: expect.any(Number), date: expect.stringMatching(TS_MS_OFFSET) });
  }
}

describe('GET /gift_cards: a JSON array of Gift card objects, every field of the spec', () => {
  it('lists the seeded catalog, each entry complete', async () => {
    const res = await get(sim, '/partners/v1/gift_cards');
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.map((g: { code: string }) => g.code).sort()).toEqual(
      ['ACME-BOOKS-FIXED', 'EURO-TRAVEL-REGION', 'FAST-FREE', 'NOVA-GAMES-FREE', 'SOLD-OUT-FIXED', 'STG-BROKEN'].sort(),
    );
    for (const gc of res.body) expectGiftCardShape(gc);
  });

  it('countries is present only on the regional gift card', async () => {
    const res = await get(sim, '/partners/v1/gift_cards');
    const withCountries = res.body.filter((g: Record<string, unknown>) => 'countries' in g);
    expect(withCountries.map((g: { code: string }) => g.code)).toEqual(['EURO-TRAVEL-REGION']);
    expect(withCountries[0]).toMatchObject({ country_name: 'Europe', country_code: 'EU' });
    expect(withCountries[0].countries).toEqual([
      { country_name: 'France', country_code: 'FR' },
      { country_name: 'Germany', country_code: 'DE' },
      { country_name: 'Spain', country_code: 'ES' },
      { country_name: 'Italy', country_code: 'IT' },
    ]);
  });
});

describe('GET /gift_cards/:id: one Gift card object, no wrapper (id = gift card code)', () => {
  it('fixed amounts, PIN, single country, two next discounts, HTML usage text', async () => {
    const res = await get(sim, '/partners/v1/gift_cards/ACME-BOOKS-FIXED');
    expect(res.status).toBe(200);
    expectGiftCardShape(res.body);
    expect(res.body).toMatchObject({
      code: 'ACME-BOOKS-FIXED',
      brand: 'Acme Books',
      code_pin: true,
      country_name: 'France',
      country_code: 'FR',
      discount: 3.5,
      facial_values: { type: 'fixed', amounts: [1000, 2500, 5000, 10000] },
    });
    expect(res.body.next_discounts).toHaveLength(2);
    expect(res.body.how_to_use_online).toMatch(/^<p>.*<\/p><ul><li>.*<\/li><\/ul>$/);
    expect('countries' in res.body).toBe(false);
  });

  it('free amounts, no PIN, null country fields, empty next_discounts, null usage text', async () => {
    const res = await get(sim, '/partners/v1/gift_cards/NOVA-GAMES-FREE');
    expectGiftCardShape(res.body);
    expect(res.body).toMatchObject({
      code: 'NOVA-GAMES-FREE',
      code_pin: false,
      country_name: null,
      country_code: null,
      next_discounts: [],
      how_to_use_online: null,
      facial_values: { type: 'free', min_amount: 500, max_amount: 50000, step_amount: 100 },
    });
  });

  it('is the same object as in the list', async () => {
    const list = await get(sim, '/partners/v1/gift_cards');
    const one = await get(sim, '/partners/v1/gift_cards/EURO-TRAVEL-REGION');
    expect(one.body).toEqual(list.body.find((g: { code: string }) => g.code === 'EURO-TRAVEL-REGION'));
  });
});

describe('GET /inventories/:id: the Inventory of one gift card', () => {
  it('limited stock: one entry per facial value, available_amount = remaining face value as text', async () => {
    const res = await get(sim, '/partners/v1/inventories/ACME-BOOKS-FIXED');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      inventories: {
        gift_card: { code: 'ACME-BOOKS-FIXED', name: 'Acme Books gift card' },
        end_to_end_api: { enabled: true, available_amount: String(500 * 1000 + 500 * 2500 + 200 * 5000 + 50 * 10000) },
        stocks: [
          { facial_value: 1000, owned_quantity: 500, shared_quantity: 0 },
          { facial_value: 2500, owned_quantity: 500, shared_quantity: 0 },
          { facial_value: 5000, owned_quantity: 200, shared_quantity: 0 },
          { facial_value: 10000, owned_quantity: 50, shared_quantity: 0 },
        ],
      },
    });
  });

  it('unlimited stock: available_amount "unlimited", no stocks', async () => {
    const res = await get(sim, '/partners/v1/inventories/NOVA-GAMES-FREE');
    expect(res.body).toEqual({
      inventories: {
        gift_card: { code: 'NOVA-GAMES-FREE', name: 'Nova Games e-gift' },
        end_to_end_api: { enabled: true, available_amount: 'unlimited' },
        stocks: [],
      },
    });
  });
});

describe('GET /balance: the Balance object, amount a decimal (SIM_INITIAL_BALANCE)', () => {
  it('starts at the configured balance', async () => {
    expect(await get(sim, '/partners/v1/balance')).toMatchObject({ status: 200, body: { balance: { amount: 2500.5 } } });
  });
});

describe('Card: every field of the spec (sync POST /cards and GET /cards/:id)', () => {
  it('a PIN card: UUID id, 16-character code, 6-digit PIN, expiry = issue + validity_period days', async () => {
    const before = Date.now();
    const res = await pullSync(sim, 'ACME-BOOKS-FIXED', 2500);
    expect(res.status).toBe(200);
    const card = res.body.card;
    expect(Object.keys(card).sort()).toEqual(['amount', 'code', 'expire_at', 'gift_card_code', 'id', 'pdf_url', 'pin_code']);
    expect(card).toMatchObject({ amount: 2500, gift_card_code: 'ACME-BOOKS-FIXED' });
    expect(card.id).toMatch(UUID);
    expect(card.code).toMatch(/^[A-Z0-9]{16}$/);
    expect(card.pin_code).toMatch(/^\d{6}$/);
    expect(card.expire_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/);
    const expiry = Date.parse(card.expire_at);
    expect(expiry).toBeGreaterThanOrEqual(before + 365 * DAY_MS);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 365 * DAY_MS);
    expect(card.pdf_url).toBe(`${sim.baseUrl}/cards/${card.id}.pdf`);
    expect(await get(sim, `/partners/v1/cards/${card.id}`)).toMatchObject({ status: 200, body: { card } });
  });

  it('a card of a gift card without PIN has pin_code null', async () => {
    const res = await pullSync(sim, 'NOVA-GAMES-FREE', 1200);
    expect(res.status).toBe(200);
    expect(res.body.card).toMatchObject({ pin_code: null, amount: 1200, gift_card_code: 'NOVA-GAMES-FREE' });
  });
});

describe('Pull request: creation carries amount_cents, show does not (spec sample)', () => {
  it('fields of both answers', async () => {
    const created = await createPullRequest(sim, 'EURO-TRAVEL-REGION', 5000, 'shape-1');
    expect(created.status).toBe(200);
    const pr = created.body.pull_request;
    expect(Object.keys(pr).sort()).toEqual(['amount_cents', 'card', 'created_at', 'id', 'request_id', 'status', 'updated_at']);
    expect(pr).toMatchObject({ status: 'waiting', request_id: 'shape-1', amount_cents: 5000, card: null });
    expect(pr.id).toMatch(UUID);
    expect(pr.created_at).toMatch(TS_MS_OFFSET);
    expect(pr.updated_at).toBe(pr.created_at);

    const { last } = await followPullRequest(sim, 'shape-1');
    const shown = last.body.pull_request;
    expect(Object.keys(shown).sort()).toEqual(['card', 'created_at', 'id', 'request_id', 'status', 'updated_at']);
    expect(shown).toMatchObject({ id: pr.id, status: 'success', request_id: 'shape-1', created_at: pr.created_at });
    expect(shown.card).toMatchObject({ amount: 5000, gift_card_code: 'EURO-TRAVEL-REGION', pin_code: expect.stringMatching(/^\d{6}$/) });
  });
});
