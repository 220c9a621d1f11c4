import { request } from 'undici';
import { useSimulator } from '../support/simulator';
import { ENVELOPE, balanceOf, get, pullSync } from './support/partner';

const sim = useSimulator();

/**
 * Issue 25: the simulator's catalog changes at run time through its control API (what cardpull's catalog
 * change feed is tested with): a gift card added, changed, withdrawn; the partner's own endpoints show it at
 * once, and a reset brings the seed back.
 */
describe('Control API: the catalog (POST, PATCH, DELETE /_sim/catalog/gift-cards)', () => {
  const control = async (method: string, path: string, body?: unknown) => {
    const res = await request(`${sim.baseUrl}${path}`, { method: method as 'POST', body: body === undefined ? undefined : JSON.stringify(body), headers: body === undefined ? {} : { 'content-type': 'application/json' } });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
  };
  const listed = async () => ((await get(sim, '/partners/v1/gift_cards')).body as { code: string }[]).map((g) => g.code);

  it('an added gift card is a whole Gift card resource of the catalog and can be pulled; the same code again is 409 gift_card_exists', async () => {
    const added = await sim.control.addGiftCard({ code: 'NEW-GIFT', name: 'New Gift', facial_values: { type: 'fixed', amounts: [1000, 2000] }, discount: 10, code_pin: true });
    const shown = (await get(sim, '/partners/v1/gift_cards/NEW-GIFT')).body;
    expect(shown).toEqual(added);
    expect(Object.keys(shown).sort()).toEqual(Object.keys((await get(sim, '/partners/v1/gift_cards/STG-BROKEN')).body).sort());
    expect(shown).toMatchObject({ code: 'NEW-GIFT', name: 'New Gift', brand: 'NEW-GIFT', discount: 10, code_pin: true, next_discounts: [] });
    const before = await balanceOf(sim);
    const pulled = await pullSync(sim, 'NEW-GIFT', 2000);
    expect([pulled.status, pulled.body.card.pin_code]).toEqual([200, expect.stringMatching(/^\d{6}$/)]);
    // The card draws its cost at the gift card's discount: 2000 less 10 %.
    expect(Math.round((before - (await balanceOf(sim))) * 100)).toBe(1800);
    expect(await control('POST', '/_sim/catalog/gift-cards', { code: 'NEW-GIFT', facial_values: { type: 'fixed', amounts: [1000] } })).toMatchObject(ENVELOPE(409, 'gift_card_exists', 'conflict'));
  });

  it('a change of face values, PIN, discount or scheduled discounts shows at once; limited stock follows the new amounts', async () => {
    const changed = await sim.control.changeGiftCard('ACME-BOOKS-FIXED', {
      facial_values: { type: 'fixed', amounts: [1000, 7500] },
      code_pin: false,
      discount: 5,
      next_discounts: [{ value: 6, date: '2027-09-01T00:00:00.000Z' }],
    });
    expect((await get(sim, '/partners/v1/gift_cards/ACME-BOOKS-FIXED')).body).toEqual(changed);
    expect(changed).toMatchObject({ facial_values: { type: 'fixed', amounts: [1000, 7500] }, code_pin: false, discount: 5, next_discounts: [{ value: 6, date: '2027-09-01T00:00:00.000Z' }] });
    expect((await sim.control.state()).stocks['ACME-BOOKS-FIXED']).toEqual({ unlimited: false, quantities: { '1000': 500, '7500': 0 } });
    expect(await pullSync(sim, 'ACME-BOOKS-FIXED', 2500)).toMatchObject(ENVELOPE(422, 'invalid_amount', 'unprocessable_entity'));
  });

  it('a withdrawn gift card leaves the catalog: its reads and pulls are 404 gift_card_not_found; a reset brings the seed back', async () => {
    await sim.control.removeGiftCard('SOLD-OUT-FIXED');
    expect(await listed()).not.toContain('SOLD-OUT-FIXED');
    expect(await get(sim, '/partners/v1/gift_cards/SOLD-OUT-FIXED')).toMatchObject(ENVELOPE(404, 'gift_card_not_found', 'not_found'));
    expect(await pullSync(sim, 'SOLD-OUT-FIXED', 1000)).toMatchObject(ENVELOPE(404, 'gift_card_not_found', 'not_found'));
    await sim.control.reset();
    expect(await listed()).toContain('SOLD-OUT-FIXED');
  });

  it('refuses nonsense: an unknown code (404), an empty change, a bad face value or discount (400 bad_request naming the field)', async () => {
    expect((await control('PATCH', '/_sim/catalog/gift-cards/NOPE', { discount: 1 })).status).toBe(404);
    expect((await control('DELETE', '/_sim/catalog/gift-cards/NOPE')).status).toBe(404);
    const empty = await control('PATCH', '/_sim/catalog/gift-cards/ACME-BOOKS-FIXED', {});
    expect([empty.status, empty.body.errors[0].message]).toEqual([400, expect.stringContaining('at least one field')]);
    const bad = await control('POST', '/_sim/catalog/gift-cards', { code: 'X', facial_values: { type: 'fixed', amounts: [] } });
    expect([bad.status, bad.body.errors[0].message]).toEqual([400, expect.stringContaining('facial_values')]);
    expect((await control('PATCH', '/_sim/catalog/gift-cards/ACME-BOOKS-FIXED', { discount: 150 })).status).toBe(400);
  });
});
