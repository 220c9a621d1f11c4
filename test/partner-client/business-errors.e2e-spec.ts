import { randomUUID } from 'node:crypto';
import { cardsIssued, pollUntilFinished, useSimulatorAndClient, valueOf } from './support/client';

// Spec, Errors (the table) as ARCHITECTURE.md "Partner calls and their classification" reads each row.

const { sim, client } = useSimulatorAndClient();

const definitive = (code: string, httpStatus: number, message: unknown = expect.any(String)) => ({
  kind: 'definitive',
  code,
  httpStatus,
  message,
});

const notFound = (code: string) => ({ kind: 'not_found', code, httpStatus: 404, message: expect.any(String) });

describe('404 gift_card_not_found (gift card code unknown; message names the code) -> definitive', () => {
  it('on the synchronous pull, and no card is issued', async () => {
    expect(await client.createCard(randomUUID(), 'NO-SUCH-CARD', 1000)).toEqual(
      definitive('gift_card_not_found', 404, expect.stringContaining('NO-SUCH-CARD')),
    );
    expect(await cardsIssued(sim)).toEqual([]);
  });

  it('on the pull request creation', async () => {
    expect(await client.createPullRequest(randomUUID(), 'NO-SUCH-CARD', 1000)).toEqual(
      definitive('gift_card_not_found', 404, expect.stringContaining('NO-SUCH-CARD')),
    );
  });

  it('on GET /gift_cards/:id', async () => {
    expect(await client.getGiftCard('NO-SUCH-CARD')).toEqual(definitive('gift_card_not_found', 404));
  });

  it('on GET /inventories/:id', async () => {
    expect(await client.getInventory('NO-SUCH-CARD')).toEqual(definitive('gift_card_not_found', 404));
  });
});

describe('422 invalid_amount, fixed gift card: amount not among the allowed amounts (message lists them) -> definitive', () => {
  it.each([
    ['sync', (id: string) => client.createCard(id, 'ACME-BOOKS-FIXED', 1234)],
    ['async', (id: string) => client.createPullRequest(id, 'ACME-BOOKS-FIXED', 1234)],
  ])('%s pull', async (_mode, pull) => {
    const outcome = await pull(randomUUID());
    expect(outcome).toEqual(definitive('invalid_amount', 422));
    const message = (outcome as { message: string }).message;
    for (const amount of [/\b1000\b/, /\b2500\b/, /\b5000\b/, /\b10000\b/]) expect(message).toMatch(amount);
    expect(await cardsIssued(sim)).toEqual([]);
  });
});

describe('422 invalid_amount, free gift card: outside min..max or not on the step (message states range and step) -> definitive', () => {
  it.each([
    ['below min', 400],
    ['above max', 50100],
    ['off the step', 550],
  ])('%s (%d)', async (_case, amount) => {
    const outcome = await client.createCard(randomUUID(), 'NOVA-GAMES-FREE', amount);
    expect(outcome).toEqual(definitive('invalid_amount', 422));
    const message = (outcome as { message: string }).message;
    // min, max and step, each as a whole number in the text
    for (const figure of [/\b500\b/, /\b50000\b/, /\b100\b/]) expect(message).toMatch(figure);
  });

  it('on the pull request creation too', async () => {
    expect(await client.createPullRequest(randomUUID(), 'NOVA-GAMES-FREE', 550)).toEqual(definitive('invalid_amount', 422));
  });
});

describe('422 out_of_stock (gift card out of stock) -> definitive', () => {
  it('SOLD-OUT-FIXED, sync and async', async () => {
    expect(await client.createCard(randomUUID(), 'SOLD-OUT-FIXED', 1000)).toEqual(definitive('out_of_stock', 422));
    expect(await client.createPullRequest(randomUUID(), 'SOLD-OUT-FIXED', 2000)).toEqual(definitive('out_of_stock', 422));
    expect(await cardsIssued(sim)).toEqual([]);
  });

  it('a stock run down to 0: the last card succeeds, the next pull (new request ID) is out_of_stock', async () => {
    await sim.control.setStock('ACME-BOOKS-FIXED', 1, 10000);
    expect((await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 10000)).kind).toBe('success');
    expect(await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 10000)).toEqual(definitive('out_of_stock', 422));
    expect(await client.createPullRequest(randomUUID(), 'ACME-BOOKS-FIXED', 10000)).toEqual(definitive('out_of_stock', 422));
    expect(valueOf(await client.getInventory('ACME-BOOKS-FIXED')).inventories.stocks).toContainEqual({
      facial_value: 10000,
      owned_quantity: 0,
      shared_quantity: 0,
    });
    expect(await cardsIssued(sim)).toHaveLength(1);
  });
});

describe('422 not_enough_funds (partner balance too low) -> definitive', () => {
  it('sync and async, nothing drawn', async () => {
    await sim.control.setBalance(5);
    expect(await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1000)).toEqual(definitive('not_enough_funds', 422));
    expect(await client.createPullRequest(randomUUID(), 'ACME-BOOKS-FIXED', 1000)).toEqual(
      definitive('not_enough_funds', 422),
    );
    expect(valueOf(await client.getBalance()).balance.amount).toBe(5);
    expect(await cardsIssued(sim)).toEqual([]);
  });

  it('a balance just enough for one card: the next pull is not_enough_funds', async () => {
    await sim.control.setBalance(10);
    expect((await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1000)).kind).toBe('success');
    expect(await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1000)).toEqual(definitive('not_enough_funds', 422));
  });
});

describe('422 unprocessable_entity: pull request request_id already used -> request_id_used', () => {
  it('a second creation with the same request_id, while waiting and after success', async () => {
    const requestId = randomUUID();
    valueOf(await client.createPullRequest(requestId, 'ACME-BOOKS-FIXED', 1000));
    expect(await client.createPullRequest(requestId, 'ACME-BOOKS-FIXED', 1000)).toEqual({
      kind: 'request_id_used',
      httpStatus: 422,
      message: expect.any(String),
    });
    await pollUntilFinished(client, requestId);
    expect((await client.createPullRequest(requestId, 'ACME-BOOKS-FIXED', 2500)).kind).toBe('request_id_used');
    expect(await cardsIssued(sim)).toHaveLength(1);
  });
});

describe('404 card_not_found (card ID unknown) -> not_found', () => {
  it('GET /cards/:id of an ID never issued', async () => {
    expect(await client.getCard(randomUUID())).toEqual(notFound('card_not_found'));
  });
});

describe('404 pull_request_not_found (request ID unknown) -> not_found', () => {
  it('GET /pull_requests/:request_id of an ID never created', async () => {
    expect(await client.getPullRequest(randomUUID())).toEqual(notFound('pull_request_not_found'));
  });

  it('a synchronous pull does not create a pull request: its request ID is not_found there', async () => {
    const requestId = randomUUID();
    valueOf(await client.createCard(requestId, 'ACME-BOOKS-FIXED', 1000));
    expect((await client.getPullRequest(requestId)).kind).toBe('not_found');
  });
});
