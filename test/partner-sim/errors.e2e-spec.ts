import { useSimulator } from '../support/simulator';
import { call, createPullRequest, ENVELOPE, get, pullSync } from './support/partner';

const sim = useSimulator();

const message = (res: { body: { errors: { message: string }[] } }) => res.body.errors[0]!.message;

/** Both pull endpoints, so each row of the table is proven on each. */
const pulls = [
  ['POST /cards', (code: string, amount: unknown, id: string) => pullSync(sim, code, amount, id)],
  ['POST /pull_requests', (code: string, amount: unknown, id: string) => createPullRequest(sim, code, amount, id)],
] as const;

describe('Errors: 404 not_found gift_card_not_found (gift card code unknown; message names the code)', () => {
  it.each(pulls)('%s', async (_name, pull) => {
    const res = await pull('NO-SUCH-CARD', 1000, 'e-404');
    expect(res).toMatchObject(ENVELOPE(404, 'gift_card_not_found', 'not_found'));
    expect(message(res)).toContain('NO-SUCH-CARD');
  });

  it.each(pulls)('%s without gift_card_code', async (_name, pull) => {
    const res = await pull(undefined as unknown as string, 1000, 'e-404b');
    expect(res).toMatchObject(ENVELOPE(404, 'gift_card_not_found', 'not_found'));
  });

  it.each(['/partners/v1/gift_cards/NO-SUCH-CARD', '/partners/v1/inventories/NO-SUCH-CARD'])('GET %s', async (path) => {
    const res = await get(sim, path);
    expect(res).toMatchObject(ENVELOPE(404, 'gift_card_not_found', 'not_found'));
    expect(message(res)).toContain('NO-SUCH-CARD');
  });
});

describe('Errors: 422 unprocessable_entity not_enough_funds (partner balance too low)', () => {
  it.each(pulls)('%s', async (_name, pull) => {
    await sim.control.setBalance(9.5); // a card of 10.00 at 3.5 % (or a scheduled 4 %) off costs more
    expect(await pull('ACME-BOOKS-FIXED', 1000, 'e-funds')).toMatchObject(ENVELOPE(422, 'not_enough_funds', 'unprocessable_entity'));
  });
});

describe('Errors: 422 unprocessable_entity out_of_stock (gift card out of stock)', () => {
  it.each(pulls)('%s', async (_name, pull) => {
    expect(await pull('SOLD-OUT-FIXED', 1000, 'e-stock')).toMatchObject(ENVELOPE(422, 'out_of_stock', 'unprocessable_entity'));
  });
});

describe('Errors: 422 unprocessable_entity invalid_amount, fixed gift card (message lists the amounts)', () => {
  it.each(pulls)('%s', async (_name, pull) => {
    const res = await pull('ACME-BOOKS-FIXED', 1234, 'e-fixed');
    expect(res).toMatchObject(ENVELOPE(422, 'invalid_amount', 'unprocessable_entity'));
    expect(message(res)).toContain('1000, 2500, 5000, 10000');
  });
});

describe('Errors: 422 unprocessable_entity invalid_amount, free gift card (message states range and step)', () => {
  it.each([
    ['above max', 50100],
    ['below min', 400],
    ['off the step', 550],
  ])('%s', async (_what, amount) => {
    for (const [, pull] of pulls) {
      const res = await pull('NOVA-GAMES-FREE', amount, `e-free-${amount}`);
      expect(res).toMatchObject(ENVELOPE(422, 'invalid_amount', 'unprocessable_entity'));
      expect(message(res)).toContain('between 500 and 50000 in steps of 100');
    }
  });

  it.each([
    ['missing', undefined],
    ['a string', '1000'],
    ['a fraction', 1000.5],
  ])('amount %s', async (_what, amount) => {
    for (const [, pull] of pulls) {
      expect(await pull('NOVA-GAMES-FREE', amount, 'e-type')).toMatchObject(ENVELOPE(422, 'invalid_amount', 'unprocessable_entity'));
    }
  });
});

describe('Errors: 422 unprocessable_entity unprocessable_entity (pull request request_id already used)', () => {
  it('a second creation with the same request_id', async () => {
    expect((await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'used-1')).status).toBe(200);
    const res = await createPullRequest(sim, 'NOVA-GAMES-FREE', 2000, 'used-1');
    expect(res).toMatchObject(ENVELOPE(422, 'unprocessable_entity', 'unprocessable_entity'));
    expect(message(res)).toContain('used-1');
  });

  it('request_id missing', async () => {
    const res = await call(sim, {
      method: 'POST',
      path: '/partners/v1/pull_requests',
      body: { pull_request: { gift_card_code: 'NOVA-GAMES-FREE', amount: 1000 } },
    });
    expect(res).toMatchObject(ENVELOPE(422, 'unprocessable_entity', 'unprocessable_entity'));
    expect(message(res)).toBe('request_id is required');
  });
});

describe('Errors: 401 unauthorized unauthorized / invalid_signature (details in signature.e2e-spec)', () => {
  it('not authorized', async () => {
    expect(await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, undefined, { authorization: null })).toMatchObject(
      ENVELOPE(401, 'unauthorized', 'unauthorized'),
    );
  });

  it('request does not match signature', async () => {
    const res = await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, undefined, { signedBody: { card: {} } });
    expect(res).toMatchObject(ENVELOPE(401, 'invalid_signature', 'unauthorized'));
  });
});

describe('Errors: 404 not_found card_not_found (card ID unknown)', () => {
  it('GET /cards/:id', async () => {
    expect(await get(sim, '/partners/v1/cards/00000000-0000-4000-8000-000000000000')).toMatchObject(
      ENVELOPE(404, 'card_not_found', 'not_found'),
    );
  });
});

describe('Errors: 404 not_found pull_request_not_found (request ID unknown)', () => {
  it('GET /pull_requests/:request_id', async () => {
    expect(await get(sim, '/partners/v1/pull_requests/never-created')).toMatchObject(
      ENVELOPE(404, 'pull_request_not_found', 'not_found'),
    );
  });
});

describe('Errors (our addition): 400 bad_request for a body that is not JSON or lacks its wrapper', () => {
  it.each([
    ['/partners/v1/cards', 'not json at all'],
    ['/partners/v1/cards', '{"amount":1000,"gift_card_code":"ACME-BOOKS-FIXED"}'],
    ['/partners/v1/cards', '{"card":"ACME-BOOKS-FIXED"}'],
    ['/partners/v1/pull_requests', '{"pull_request":'],
    ['/partners/v1/pull_requests', '{"card":{"amount":1000,"gift_card_code":"ACME-BOOKS-FIXED","request_id":"x"}}'],
    ['/partners/v1/pull_requests', '[]'],
  ])('POST %s with %s', async (path, rawBody) => {
    const res = await call(sim, { method: 'POST', path, rawBody });
    expect(res).toMatchObject(ENVELOPE(400, 'bad_request', 'bad_request'));
  });

  it('POST /cards without a body', async () => {
    expect(await call(sim, { method: 'POST', path: '/partners/v1/cards' })).toMatchObject(ENVELOPE(400, 'bad_request', 'bad_request'));
  });
});

describe('Errors: order of the checks (our choice) gift card -> amount -> stock -> funds', () => {
  it('an unknown gift card wins over a bad amount', async () => {
    expect(await pullSync(sim, 'NO-SUCH-CARD', 'x')).toMatchObject(ENVELOPE(404, 'gift_card_not_found', 'not_found'));
  });

  it('a bad amount wins over no stock', async () => {
    expect(await pullSync(sim, 'SOLD-OUT-FIXED', 1234)).toMatchObject(ENVELOPE(422, 'invalid_amount', 'unprocessable_entity'));
  });

  it('no stock wins over no funds', async () => {
    await sim.control.setBalance(0);
    expect(await pullSync(sim, 'SOLD-OUT-FIXED', 1000)).toMatchObject(ENVELOPE(422, 'out_of_stock', 'unprocessable_entity'));
  });

  it('the request_id check comes before the gift card', async () => {
    const res = await call(sim, { method: 'POST', path: '/partners/v1/pull_requests', body: { pull_request: { amount: 1000 } } });
    expect(res).toMatchObject(ENVELOPE(422, 'unprocessable_entity', 'unprocessable_entity'));
  });
});
