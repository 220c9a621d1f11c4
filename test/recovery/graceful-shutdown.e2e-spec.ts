import { waitFor } from '@cardpull/testing';
import { spawnWorker, stopAllProcesses } from '../support/processes';
import { useStack } from '../support/stack';
import { GIFT_CARD, cardsOf, dbPicture, ms, pidOfActor, placeOrder, postsOf, summary, waitForCompleted } from './support/recovery';

const LATENCY_MS = 1_500;

/** The errors the worker logged for failed order steps (OrderStepsProcessor's "order step failed; retrying"). */
function stepFailures(logs: string[]): string[] {
  return logs
    .map((line) => {
      try {
        return JSON.parse(line) as { context?: string; msg?: string; err?: { message?: string } };
      } catch {
        return null;
      }
    })
    .filter((l) => l?.context === 'OrderStepsProcessor' && /failed/.test(l.msg ?? ''))
    .map((l) => `${l!.msg}: ${l!.err?.message}`);
}

/**
 * SIGTERM is how a deploy stops a worker. QueueProcessor's promise (apps/worker/src/processors/queue-processor.ts): "stop taking
 * jobs and let the active ones finish". A partner call in flight when the signal arrives must therefore
 * end normally: its answer recorded (the card stored, the order completed) by that same worker, which then
 * exits with code 0. Whatever happens, no card may be lost or stored twice. The partner is made slow
 * (latency 1.5 s, below this suite's 3 s client timeout) so the signal surely lands mid-call.
 */
describe('Graceful shutdown: on SIGTERM a worker finishes its in-flight partner call, records its answer, then exits 0', () => {
  const stack = useStack({ worker: false, env: { PARTNER_TIMEOUT_MS: '3000' }, beforeClose: stopAllProcesses });

  it('a sync order whose POST /cards is in flight at SIGTERM is completed by that worker, with the one card issued', async () => {
    const worker = spawnWorker(stack.env, { label: 'worker receiving SIGTERM' });
    await worker.ready();
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: LATENCY_MS, gift_card_codes: [GIFT_CARD], times: 1 });
    const order = await placeOrder(stack, 'sync');
    const requestId = order.attempts[0]!.request_id;
    const post = await waitFor('the POST /cards to reach the partner', async () => postsOf(await stack.sim.control.ledger(), requestId)[0], 10_000, 10);

    worker.kill('SIGTERM');
    const termAt = Date.now();
    const exit = await worker.exited;
    const exitAt = Date.now();
    const afterExit = await dbPicture(stack);
    const completedEvent = afterExit.events.find((e) => e.order_id === order.id && e.type === 'completed');

    // Whatever the exit looked like, the order must end with exactly the card the partner issued.
    let restartedPid: number | null = null;
    if (!completedEvent) {
      const again = spawnWorker(stack.env, { label: 'worker after the shutdown' });
      restartedPid = again.pid;
      await waitForCompleted(stack, order.id, 20_000);
      await again.stop();
    }
    const done = await waitForCompleted(stack, order.id);
    const ledger = await stack.sim.control.ledger();
    const issued = cardsOf(ledger, requestId);
    const stored = (await dbPicture(stack)).cards.filter((c) => c.order_id === order.id);
    const firstPost = postsOf(ledger, requestId)[0]!;

    summary('graceful shutdown (SIGTERM mid-call)', {
      call_in_flight_at_sigterm: ms(termAt - Date.parse(post.at)),
      exit: exit.signal ?? `code ${exit.code}`,
      exit_after_sigterm: ms(exitAt - termAt),
      first_call_answered: firstPost.status ?? 'no',
      completed_by: completedEvent ? 'the stopping worker' : `a restarted worker (pid ${restartedPid})`,
      posts: postsOf(ledger, requestId).length,
      cards: issued.length,
    });

    // No card lost or duplicated.
    expect(issued).toHaveLength(1);
    expect(done.card?.id).toBe(issued[0]!.id);
    expect(stored).toEqual([{ order_id: order.id, request_id: requestId, partner_card_id: issued[0]!.id }]);
    expect(done.attempts.map((a) => a.request_id)).toEqual([requestId]);
    // The in-flight call ended normally (the partner wrote its 200) before the process was gone...
    expect(firstPost.status).toBe(200);
    expect(Date.parse(firstPost.finished_at!)).toBeLessThanOrEqual(exitAt);
    // ...its answer was recorded by the stopping worker itself (no second call needed); on failure the
    // diff shows what the stopping worker logged about its step...
    expect({ recordedBy: pidOfActor(completedEvent?.actor ?? null), stepFailures: stepFailures(worker.logs) }).toEqual({
      recordedBy: worker.pid,
      stepFailures: [],
    });
    expect(postsOf(ledger, requestId)).toHaveLength(1);
    // ...and the process exited cleanly.
    expect(exit).toEqual({ code: 0, signal: null });
  });
});
