import { randomUUID } from 'node:crypto';
import { startSimulator, type SimHandle } from '../support/simulator';
import { clientFor, closeClient, closeClients } from './support/client';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';

// PartnerClient keeps connections to the partner alive ("Kept-alive connections to the partner"): sequential
// calls share one TCP connection. Seen from a TCP relay between the client and the simulator.

let sim: SimHandle;
let proxy: TcpProxy;
beforeAll(async () => {
  sim = await startSimulator();
});
beforeEach(async () => {
  await sim.control.reset();
  proxy = await startTcpProxy(sim.baseUrl);
});
afterEach(async () => {
  await closeClients();
  await proxy.close();
});
afterAll(() => sim.close());

// undici's Pool may open a second connection on the second sequential call (the first socket is still
// marked busy for one tick after its answer: undici's idle-socket validation); from then on the calls share
// those connections. So the assertions are "the number of connections does not grow with the calls".

/**
 * A client through the relay, with a deadline a loaded machine cannot miss (a CI run beside a benchmark timed
 * a pull out at the suites' 800 ms): what these tests prove is the connections' reuse, not the calls' speed.
 */
const relayed = () => clientFor(sim, { baseUrl: proxy.baseUrl, timeoutMs: 30_000 });

describe('Keep-alive: sequential calls reuse the open connections', () => {
  it('20 sequential calls (reads and pulls) succeed over at most 2 TCP connections', async () => {
    const client = relayed();
    let afterWarmUp = 0;
    for (let i = 0; i < 10; i++) {
      expect((await client.getBalance()).kind).toBe('success');
      expect((await client.createCard(randomUUID(), 'FAST-FREE', 100 + i)).kind).toBe('success');
      if (i === 1) afterWarmUp = proxy.connections();
    }
    expect(proxy.connections()).toBe(afterWarmUp);
    expect(proxy.connections()).toBeLessThanOrEqual(2);
  });

  it('bursts of parallel calls reuse the connections of the previous burst', async () => {
    const client = relayed();
    const burst = async () => {
      const outcomes = await Promise.all(Array.from({ length: 5 }, () => client.getBalance()));
      expect(outcomes.map((o) => o.kind)).toEqual(Array(5).fill('success'));
    };
    const counts: number[] = [];
    for (let i = 0; i < 10; i++) {
      await burst();
      counts.push(proxy.connections());
    }
    // 50 calls; without keep-alive, 50 connections. Bounded by twice the parallelism (see above), and once
    // warm no burst opens any.
    expect(counts[9]).toBeLessThanOrEqual(10);
    expect(counts[9]).toBe(counts[4]);
  });

  it('a connection broken by the partner is not reused: the next calls succeed on a new one', async () => {
    const client = relayed();
    for (let i = 0; i < 3; i++) expect((await client.getBalance()).kind).toBe('success');
    const before = proxy.connections();
    await sim.control.addFault({ endpoint: 'any', mode: 'reset', times: 1 });
    expect(await client.getBalance()).toMatchObject({ kind: 'unknown', reason: 'network' });
    for (let i = 0; i < 5; i++) expect((await client.getBalance()).kind).toBe('success');
    expect(proxy.connections()).toBeGreaterThan(before);
    expect(proxy.connections()).toBeLessThanOrEqual(before + 2);
  });

  it('close() ends the kept-alive connections', async () => {
    const client = relayed();
    expect((await client.getBalance()).kind).toBe('success');
    expect(proxy.openSockets()).toBeGreaterThan(0);
    await closeClient(client);
    await new Promise((r) => setTimeout(r, 50));
    expect(proxy.openSockets()).toBe(0);
  });
});
