import { randomUUID } from 'node:crypto';
import { seedCostNow } from '../partner-sim/support/partner';
import { cardsIssued, useSimulatorAndClient, valueOf } from './support/client';

// Spec, POST /cards and Request ID: "repeating the call with the same request ID returns the response of the
// first call and does not create another card"; "if the first pull failed, the repeated call returns that
// error"; a request ID must be unique per pull (a new ID is a new card).

const { sim, client } = useSimulatorAndClient();

describe('Same request ID twice -> the first response again, one card', () => {
  it('the same card, field for field; one card in the ledger; stock and balance drawn once', async () => {
    const requestId = randomUUID();
    const first = await client.createCard(requestId, 'ACME-BOOKS-FIXED', 5000);
    const second = await client.createCard(requestId, 'ACME-BOOKS-FIXED', 5000);
    expect(first.kind).toBe('success');
    expect(second).toEqual(first);
    expect(await cardsIssued(sim)).toEqual([expect.objectContaining({ id: valueOf(first).id, request_id: requestId })]);
    // Drawn once: the card's cost (its face value less the gift card's discount in force).
    expect(valueOf(await client.getBalance()).balance.amount).toBeCloseTo(1_000_000 - seedCostNow('ACME-BOOKS-FIXED', 5000), 2);
    expect(valueOf(await client.getInventory('ACME-BOOKS-FIXED')).inventories.stocks).toContainEqual({
      facial_value: 5000,
      owned_quantity: 199,
      shared_quantity: 0,
    });
  });

  it('whatever the repeat\'s body: the first call\'s card, not a new one', async () => {
    const requestId = randomUUID();
    const first = valueOf(await client.createCard(requestId, 'ACME-BOOKS-FIXED', 1000));
    expect(valueOf(await client.createCard(requestId, 'NOVA-GAMES-FREE', 2000))).toEqual(first);
    expect(await cardsIssued(sim)).toHaveLength(1);
  });
});

describe('Same request ID after a failed first pull -> that error again', () => {
  it('out_of_stock is replayed even once stock is back; a new request ID then gets a card', async () => {
    const requestId = randomUUID();
    expect(await client.createCard(requestId, 'SOLD-OUT-FIXED', 1000)).toMatchObject({ kind: 'definitive', code: 'out_of_stock' });
    await sim.control.setStock('SOLD-OUT-FIXED', 10, 1000);
    expect(await client.createCard(requestId, 'SOLD-OUT-FIXED', 1000)).toMatchObject({ kind: 'definitive', code: 'out_of_stock' });
    expect(await cardsIssued(sim)).toEqual([]);
    expect(valueOf(await client.createCard(randomUUID(), 'SOLD-OUT-FIXED', 1000))).toMatchObject({ amount: 1000 });
  });

  it('not_enough_funds is replayed even once the balance is topped up', async () => {
    await sim.control.setBalance(1);
    const requestId = randomUUID();
    expect((await client.createCard(requestId, 'ACME-BOOKS-FIXED', 1000)).kind).toBe('definitive');
    await sim.control.setBalance(1_000);
    expect(await client.createCard(requestId, 'ACME-BOOKS-FIXED', 1000)).toMatchObject({
      kind: 'definitive',
      code: 'not_enough_funds',
    });
  });
});

describe('A different request ID -> another card', () => {
  it('two IDs, same gift card and amount: two distinct cards in the ledger', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const first = valueOf(await client.createCard(a, 'ACME-BOOKS-FIXED', 1000));
    const second = valueOf(await client.createCard(b, 'ACME-BOOKS-FIXED', 1000));
    expect(second.id).not.toBe(first.id);
    expect(second.code).not.toBe(first.code);
    const issued = await cardsIssued(sim);
    expect(issued.map((c) => [c.request_id, c.id])).toEqual([
      [a, first.id],
      [b, second.id],
    ]);
  });
});
