import type { AddressInfo } from 'node:net';
import { Logger as NestLogger } from '@nestjs/common';
import { request } from 'undici';
import { loadSimConfig } from '@cardpull/config';
import { LogCapture, SimControl } from '@cardpull/testing';
import { startSimulator, useSimulator, type SimHandle } from '../support/simulator';
import { createSimApp } from '../../apps/partner-sim/src/sim.app';
import { call, createPullRequest, followPullRequest, get, getPullRequest, pullSync } from './support/partner';

const sim = useSimulator();

describe('Control API: off unless SIM_CONTROL is true (then /_sim/* is 404, except health)', () => {
  it('404 for every control route, health still answers', async () => {
    const off = await startSimulator({ SIM_CONTROL: 'false' });
    try {
      for (const [method, path] of [
        ['POST', '/_sim/reset'],
        ['GET', '/_sim/ledger'],
        ['GET', '/_sim/state'],
        ['GET', '/_sim/faults'],
        ['POST', '/_sim/faults'],
        ['PUT', '/_sim/balance'],
      ] as const) {
        const res = await request(`${off.baseUrl}${path}`, { method });
        await res.body.dump();
        expect([method, path, res.statusCode]).toEqual([method, path, 404]);
      }
      const health = await request(`${off.baseUrl}/_sim/health`);
      expect(await health.body.json()).toEqual({ status: 'ok', mode: 'staging', control: false });
      // The partner endpoints are there all the same.
      expect((await get(off, '/partners/v1/balance')).status).toBe(200);
    } finally {
      await off.close();
    }
  });

  it('needs no signature when on', async () => {
    expect((await request(`${sim.baseUrl}/_sim/state`)).statusCode).toBe(200);
  });
});

describe('Ledger: every partner request received and every card issued', () => {
  it('records requests, unauthorized ones included, with request_id from header, body or path', async () => {
    await get(sim, '/partners/v1/balance', { authorization: null });
    await get(sim, '/partners/v1/balance', { sharedKeyHex: '00'.repeat(32) });
    const sync = await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, 'led-sync');
    await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'led-async');
    await followPullRequest(sim, 'led-async');
    const { requests, cards } = await sim.control.ledger();
    expect(requests.slice(0, 4)).toEqual([
      expect.objectContaining({ method: 'GET', path: '/partners/v1/balance', status: 401, auth: 'unauthorized', request_id: null }),
      expect.objectContaining({ method: 'GET', path: '/partners/v1/balance', status: 401, auth: 'invalid_signature' }),
      expect.objectContaining({ method: 'POST', path: '/partners/v1/cards', status: 200, auth: 'ok', request_id: 'led-sync' }),
      expect.objectContaining({ method: 'POST', path: '/partners/v1/pull_requests', status: 200, auth: 'ok', request_id: 'led-async' }),
    ]);
    expect(requests.slice(4).every((r) => r.path === '/partners/v1/pull_requests/led-async' && r.request_id === 'led-async')).toBe(true);
    expect(cards).toEqual([
      expect.objectContaining({ id: sync.body.card.id, code: sync.body.card.code, pin_code: sync.body.card.pin_code, via: 'sync' }),
      expect.objectContaining({ request_id: 'led-async', amount: 1000, gift_card_code: 'NOVA-GAMES-FREE', pin_code: null, via: 'async' }),
    ]);
    for (const r of requests) expect(Date.parse(r.at)).not.toBeNaN();
  });

  it('since limits both lists', async () => {
    await pullSync(sim, 'FAST-FREE', 100, 'before');
    await new Promise((r) => setTimeout(r, 20));
    const since = new Date();
    await pullSync(sim, 'FAST-FREE', 100, 'after');
    const ledger = await sim.control.ledger(since);
    expect(ledger.requests.map((r) => r.request_id)).toEqual(['after']);
    expect(ledger.cards.map((c) => c.request_id)).toEqual(['after']);
    const bad = await request(`${sim.baseUrl}/_sim/ledger?since=yesterday`);
    expect(bad.statusCode).toBe(400);
    await bad.body.dump();
  });
});

describe('Control API: reset, state, balance and stock', () => {
  it('reset goes back to the seed: balance, stock, cards, pull requests, faults, ledger', async () => {
    await sim.control.setBalance(50);
    await sim.control.setStock('ACME-BOOKS-FIXED', 0);
    const card = (await pullSync(sim, 'NOVA-GAMES-FREE', 1000, 'r-1')).body.card;
    await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'r-2');
    await sim.control.addFault({ endpoint: 'any', mode: 'latency', latency_ms: 1 });
    await sim.control.reset();
    const state = await sim.control.state();
    expect(state).toMatchObject({ mode: 'staging', balance: 1_000_000, counts: { cards: 0, pull_requests: 0, sync_pulls: 0 } });
    expect(state.stocks['ACME-BOOKS-FIXED']).toEqual({ unlimited: false, quantities: { 1000: 500, 2500: 500, 5000: 200, 10000: 50 } });
    expect(state.stocks['NOVA-GAMES-FREE']).toEqual({ unlimited: true });
    expect(await sim.control.faults()).toEqual([]);
    expect(await sim.control.ledger()).toEqual({ requests: [], cards: [], pulls: [] });
    expect((await get(sim, `/partners/v1/cards/${card.id}`)).status).toBe(404);
    expect((await getPullRequest(sim, 'r-2')).status).toBe(404);
    // The request ID is free again.
    expect((await pullSync(sim, 'NOVA-GAMES-FREE', 1000, 'r-1')).body.card.id).not.toBe(card.id);
  });

  it('state counts cards, pull requests and sync pulls', async () => {
    await pullSync(sim, 'FAST-FREE', 100, 's-1');
    await pullSync(sim, 'SOLD-OUT-FIXED', 1000, 's-2');
    await createPullRequest(sim, 'FAST-FREE', 100, 's-3');
    expect((await sim.control.state()).counts).toEqual({ cards: 1, pull_requests: 1, sync_pulls: 2 });
  });

  it.each([
    ['a negative balance', '/_sim/balance', { amount: -1 }],
    ['a balance that is text', '/_sim/balance', { amount: '10' }],
    ['stock of an amount the gift card does not allow', '/_sim/stock', { gift_card_code: 'ACME-BOOKS-FIXED', facial_value: 1234, quantity: 1 }],
    ['stock of a free gift card without facial value', '/_sim/stock', { gift_card_code: 'NOVA-GAMES-FREE', quantity: 1 }],
    ['a negative quantity', '/_sim/stock', { gift_card_code: 'ACME-BOOKS-FIXED', quantity: -2 }],
  ])('400 for %s', async (_what, path, body) => {
    const res = await request(`${sim.baseUrl}${path}`, { method: 'PUT', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(await res.body.json()).toMatchObject({ errors: [{ code: 'bad_request' }], status: 'bad_request' });
  });

  it('404 for the stock of an unknown gift card', async () => {
    await expect(sim.control.setStock('NOPE', 1)).rejects.toThrow(/answered 404/);
  });
});

describe('Logs (invariant 7): one JSON line per request, never a card code, PIN or the Authorization header', () => {
  it('pulls and reads leave request lines without secrets', async () => {
    const logs = new LogCapture();
    const app = await createSimApp(loadSimConfig({ SIM_CONTROL: 'true', LOG_LEVEL: 'info' }), { logStream: logs });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.getHttpServer().address() as AddressInfo;
    const baseUrl = `http://127.0.0.1:${port}`;
    const handle = { baseUrl, config: loadSimConfig({}) } as SimHandle;
    // A silent simulator started afterwards in the same process (as other suites do) changes nothing here.
    const silentOne = await startSimulator();
    try {
      const before = logs.lines.length;
      new NestLogger('Probe').log('still logging');
      const card = (await pullSync(handle, 'ACME-BOOKS-FIXED', 1000, 'log-1')).body.card;
      await get(handle, `/partners/v1/cards/${card.id}`);
      const authorization = 'Bearer sim-api-key, Id=sim-identifier, Signature=deadbeef, Timestamp=1';
      await call(handle, { method: 'GET', path: '/partners/v1/balance', authorization });
      const ledger = await new SimControl(baseUrl).ledger();
      const requestLines = logs.json().slice(before).filter((l) => l.msg === 'request completed');
      expect(requestLines.map((l) => (l.req as { url: string }).url)).toEqual([
        '/partners/v1/cards',
        `/partners/v1/cards/${card.id}`,
        '/partners/v1/balance',
        '/_sim/ledger',
      ]);
      for (const secret of [card.code, card.pin_code, ledger.cards[0]!.code, 'deadbeef', 'sim-api-key']) {
        expect(logs.text).not.toContain(secret);
      }
      expect(logs.json().slice(before)[0]).toMatchObject({ msg: 'still logging', context: 'Probe' });
    } finally {
      await silentOne.close();
      await app.close();
    }
  });
});
