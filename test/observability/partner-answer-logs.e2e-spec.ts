import { Client } from 'pg';
import { waitFor } from '@cardpull/testing';
import { createOrder, useStack, waitForOrder } from '../support/stack';

type Line = Record<string, unknown> & { level?: string; msg?: string; orderId?: string; err?: { message?: string; stack?: string } };

/**
 * What the worker logs about a partner that keeps failing: each answer (a timeout, a 5xx, a reset, a 429,
 * "come back later", an unreadable body) is part of the partner's life, one structured line naming the
 * order, the request ID, the step, the classification, the status and the wait until the ID is asked
 * again, never a stack. A stack, at error, is for our own failures only.
 */
describe('partner answers in the worker’s log: one structured line each; stacks only for our own failures', () => {
  const stack = useStack({ env: { UNKNOWN_OUTCOME_WINDOW_MS: '600000' } });
  afterEach(() => stack.sim.control.clearFaults());

  const lines = (): Line[] => stack.logs.json() as Line[];

  it('a partner answering 500 again and again: one warn line per answer (order, request ID, step, classification, status, next ask), no stack; the card one info line', async () => {
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 500, gift_card_codes: ['NOVA-GAMES-FREE'], times: 3 });
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 1500 });
    expect((await waitForOrder(stack, id)).status).toBe('completed');
    const posts = (await stack.sim.control.ledger()).requests.filter((r) => r.method === 'POST' && r.request_id === requestId);
    expect(posts.map((p) => p.status)).toEqual([500, 500, 500, 200]);

    // Every line that names the request ID: exactly one per answer, in order.
    const about = stack.logs.lines.filter((l) => l.includes(requestId)).map((l) => JSON.parse(l) as Line);
    expect(about.map((l) => [l.level, (l.partnerAnswer as { classification?: string } | undefined)?.classification])).toEqual([
      ['warn', 'server_error'],
      ['warn', 'server_error'],
      ['warn', 'server_error'],
      ['info', 'card'],
    ]);
    for (const l of about.slice(0, 3)) {
      expect(l.partnerAnswer).toEqual({
        orderId: id,
        requestId,
        step: 'sync_call',
        answer: 'unknown',
        classification: 'server_error',
        httpStatus: 500,
        message: 'HTTP 500',
        rule: 'unknown_outcome',
        nextStep: 'sync_call',
        nextAskInMs: stack.config.SYNC_RETRY_INTERVAL_MS,
      });
      expect(l.msg).toContain(`server_error (HTTP 500)`);
    }
    expect(about[3]!.partnerAnswer).toMatchObject({ orderId: id, requestId, step: 'sync_call', answer: 'success', classification: 'card', nextAskInMs: null, outcome: 'completed' });
    // No stack, no error for any line of this order: nothing went wrong on our side.
    const ofOrder = lines().filter((l) => l.orderId === id || JSON.stringify(l).includes(requestId));
    expect(ofOrder.filter((l) => l.level === 'error' || 'err' in l || /\n\s+at /.test(JSON.stringify(l)))).toEqual([]);
  });

  it('our own failure (Postgres refuses to store the card) is logged at error, with its stack', async () => {
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    await pg.query(`
      CREATE OR REPLACE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'test: % refused', TG_TABLE_NAME; END $$;
      CREATE TRIGGER test_refuse BEFORE INSERT ON cards FOR EACH ROW EXECUTE FUNCTION test_refuse();`);
    let refusing = true;
    try {
      const { id } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 1700 });
      const failed = await waitFor('a failed step of the order', () => lines().find((l) => l.orderId === id && /order step failed/.test(l.msg ?? '')), 20_000);
      expect(failed.level).toBe('error');
      expect(failed.err?.message).toContain('cards refused');
      expect(failed.err?.stack).toMatch(/cards refused[\s\S]*\n\s+at /);
      await pg.query('DROP TRIGGER test_refuse ON cards');
      refusing = false;
      expect((await waitForOrder(stack, id)).status).toBe('completed');
    } finally {
      if (refusing) await pg.query('DROP TRIGGER IF EXISTS test_refuse ON cards');
      await pg.end();
    }
  });
});
