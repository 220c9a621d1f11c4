import { startSimulator, useSimulator } from '../support/simulator';
import { balanceOf, createPullRequest, ENVELOPE, followPullRequest, get, pullSync } from './support/partner';

const sim = useSimulator();

describe('Balance: pulling a card draws its cost, the face value less the discount in force (amounts in minor units, the balance in currency units)', () => {
  it('sync and async pulls each draw their cost, exactly', async () => {
    await sim.control.setBalance(100);
    await pullSync(sim, 'NOVA-GAMES-FREE', 2500); // 2 % off: 24.50
    expect(await balanceOf(sim)).toBe(75.5);
    await pullSync(sim, 'FAST-FREE', 101); // no discount
    expect(await balanceOf(sim)).toBe(74.49);
    await createPullRequest(sim, 'NOVA-GAMES-FREE', 1300, 'money-1'); // 12.74
    await followPullRequest(sim, 'money-1');
    expect(await balanceOf(sim)).toBe(61.75);
  });

  it('not_enough_funds when the balance is below the cost; nothing is drawn', async () => {
    await sim.control.setBalance(30);
    expect((await pullSync(sim, 'NOVA-GAMES-FREE', 2500)).status).toBe(200);
    expect(await balanceOf(sim)).toBe(5.5);
    expect(await pullSync(sim, 'ACME-BOOKS-FIXED', 1000)).toMatchObject(ENVELOPE(422, 'not_enough_funds', 'unprocessable_entity'));
    expect(await createPullRequest(sim, 'ACME-BOOKS-FIXED', 1000, 'poor-1')).toMatchObject({ status: 422 });
    expect(await balanceOf(sim)).toBe(5.5);
    // Exactly enough is enough.
    expect((await pullSync(sim, 'FAST-FREE', 550)).status).toBe(200);
    expect(await balanceOf(sim)).toBe(0);
  });
});

describe('Stock: out_of_stock when a stock runs out', () => {
  it('quantity 1: the first pull gets the card, the second out_of_stock; the inventory follows', async () => {
    const inventory = await sim.control.setStock('ACME-BOOKS-FIXED', 1, 5000);
    expect(inventory.inventories.stocks).toContainEqual({ facial_value: 5000, owned_quantity: 1, shared_quantity: 0 });
    expect((await pullSync(sim, 'ACME-BOOKS-FIXED', 5000)).status).toBe(200);
    expect(await pullSync(sim, 'ACME-BOOKS-FIXED', 5000)).toMatchObject(ENVELOPE(422, 'out_of_stock', 'unprocessable_entity'));
    const after = (await get(sim, '/partners/v1/inventories/ACME-BOOKS-FIXED')).body.inventories;
    expect(after.stocks).toContainEqual({ facial_value: 5000, owned_quantity: 0, shared_quantity: 0 });
    expect(after.end_to_end_api.available_amount).toBe(String(500 * 1000 + 500 * 2500 + 50 * 10000));
    // Other facial values are not affected.
    expect((await pullSync(sim, 'ACME-BOOKS-FIXED', 1000)).status).toBe(200);
  });

  it('SOLD-OUT-FIXED: every pull is out_of_stock, sync and async', async () => {
    for (const amount of [1000, 2000]) {
      expect(await pullSync(sim, 'SOLD-OUT-FIXED', amount)).toMatchObject(ENVELOPE(422, 'out_of_stock', 'unprocessable_entity'));
      expect(await createPullRequest(sim, 'SOLD-OUT-FIXED', amount, `so-${amount}`)).toMatchObject(
        ENVELOPE(422, 'out_of_stock', 'unprocessable_entity'),
      );
    }
    expect((await get(sim, '/partners/v1/inventories/SOLD-OUT-FIXED')).body.inventories.end_to_end_api.available_amount).toBe('0');
  });

  it("control: 'unlimited' lifts a limit, a number without facial value sets every fixed amount", async () => {
    await sim.control.setStock('SOLD-OUT-FIXED', 'unlimited');
    expect((await pullSync(sim, 'SOLD-OUT-FIXED', 2000)).status).toBe(200);
    const inventory = await sim.control.setStock('EURO-TRAVEL-REGION', 3);
    expect(inventory.inventories).toMatchObject({
      end_to_end_api: { available_amount: String(3 * 2000 + 3 * 5000) },
      stocks: [
        { facial_value: 2000, owned_quantity: 3, shared_quantity: 0 },
        { facial_value: 5000, owned_quantity: 3, shared_quantity: 0 },
      ],
    });
  });
});

describe('Environments: staging has a brand whose pulls do not work; production does not', () => {
  it('staging: STG-BROKEN is listed; a sync pull answers 503 service_unavailable (replayed), no card', async () => {
    expect((await get(sim, '/partners/v1/gift_cards/STG-BROKEN')).body).toMatchObject({ brand: 'Brokenbrand' });
    const first = await pullSync(sim, 'STG-BROKEN', 1000, 'broken-1');
    expect(first).toMatchObject(ENVELOPE(503, 'service_unavailable', 'service_unavailable'));
    expect((await pullSync(sim, 'STG-BROKEN', 1000, 'broken-1')).body).toEqual(first.body);
    expect(await balanceOf(sim)).toBe(1_000_000);
    expect((await sim.control.ledger()).cards).toEqual([]);
  });

  it('staging: an async pull of STG-BROKEN ends in error', async () => {
    expect((await createPullRequest(sim, 'STG-BROKEN', 1000, 'broken-2')).status).toBe(200);
    expect((await followPullRequest(sim, 'broken-2')).statuses.pop()).toBe('error');
    expect(await balanceOf(sim)).toBe(1_000_000);
  });

  it('staging: invalid amounts are still invalid_amount', async () => {
    expect((await pullSync(sim, 'STG-BROKEN', 2000)).body.errors[0].code).toBe('invalid_amount');
  });

  it('production: STG-BROKEN does not exist', async () => {
    const prod = await startSimulator({ SIM_MODE: 'production' });
    try {
      const list = await get(prod, '/partners/v1/gift_cards');
      expect(list.body.map((g: { code: string }) => g.code)).not.toContain('STG-BROKEN');
      expect(list.body).toHaveLength(5);
      expect(await get(prod, '/partners/v1/gift_cards/STG-BROKEN')).toMatchObject(ENVELOPE(404, 'gift_card_not_found', 'not_found'));
      expect(await pullSync(prod, 'STG-BROKEN', 1000)).toMatchObject(ENVELOPE(404, 'gift_card_not_found', 'not_found'));
      expect((await prod.control.state()).mode).toBe('production');
    } finally {
      await prod.close();
    }
  });
});
