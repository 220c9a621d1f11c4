import { request } from 'undici';
import { LOCAL_CALLBACKS } from '@cardpull/config';
import { CALLBACK_HEADERS, signCallback } from '@cardpull/orders';
import { startSimulator, useSimulator } from '../support/simulator';

const sim = useSimulator();

/** POSTs a callback to the simulator's receiver as cardpull's deliverer does, signed with `secret`. */
async function deliver(baseUrl: string, event: object, secret: string = LOCAL_CALLBACKS.secret, timestamp = Math.floor(Date.now() / 1000)) {
  const body = JSON.stringify(event);
  const res = await request(`${baseUrl}/_callbacks`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [CALLBACK_HEADERS.eventId]: (event as { id?: string }).id ?? 'none',
      [CALLBACK_HEADERS.eventType]: 'order.completed',
      [CALLBACK_HEADERS.timestamp]: String(timestamp),
      [CALLBACK_HEADERS.signature]: signCallback(secret, timestamp, body),
    },
    body,
  });
  await res.body.dump();
  return res.statusCode;
}
const received = async (baseUrl: string) => ((await (await request(`${baseUrl}/_callbacks`)).body.json()) as { callbacks: any[] }).callbacks;
const event = (n: number) => ({ id: `ev-${n}`, type: 'order.completed', status: 'completed', order: { id: `order-${n}`, status: 'completed' } });

describe('the simulator as a local callback receiver (POST and GET /_callbacks, with the control API)', () => {
  it('a callback signed with the local callback secret is accepted (204) and listed with its event, marked valid', async () => {
    expect(await deliver(sim.baseUrl, event(1))).toBe(204);
    expect(await received(sim.baseUrl)).toEqual([{ received_at: expect.any(String), signature: 'valid', event_id: 'ev-1', event_type: 'order.completed', event: event(1) }]);
  });

  it('a callback signed with another secret, or too old, is refused (401) and listed with why', async () => {
    expect(await deliver(sim.baseUrl, event(1), 'another-secret-of-16-chars')).toBe(401);
    expect(await deliver(sim.baseUrl, event(2), LOCAL_CALLBACKS.secret, Math.floor(Date.now() / 1000) - 3_600)).toBe(401);
    expect((await received(sim.baseUrl)).map((c) => [c.event_id, c.signature])).toEqual([
      ['ev-2', 'stale'],
      ['ev-1', 'invalid'],
    ]);
  });

  it('lists the last 50, newest first; a reset forgets them', async () => {
    for (let i = 1; i <= 55; i++) await deliver(sim.baseUrl, event(i));
    const list = await received(sim.baseUrl);
    expect(list).toHaveLength(50);
    expect([list[0].event_id, list[49].event_id]).toEqual(['ev-55', 'ev-6']);
    await sim.control.reset();
    expect(await received(sim.baseUrl)).toEqual([]);
  });

  it('without the control API (SIM_CONTROL off) there is no receiver', async () => {
    const off = await startSimulator({ SIM_CONTROL: 'false' });
    try {
      expect(await deliver(off.baseUrl, event(1))).toBe(404);
    } finally {
      await off.close();
    }
  });
});
