import { spawnWorker, stopAllProcesses, type AppProcess } from '../support/processes';
import { checkInvariants, snapshot } from '@cardpull/testing';
import { useStack } from '../support/stack';
import {
  cardProblems,
  dbPicture,
  explainOverlaps,
  flushAll,
  inFlightUntil,
  ms,
  overlappingPosts,
  pidOfActor,
  placeOrder,
  summary,
  waitForAllEnded,
  type Mode,
  type OrderView,
} from './support/recovery';

const N = 60;

/**
 * Three worker processes share one queue and one database. Faults on a share of the partner calls make
 * unknown outcomes common (so the same request ID is sent again and again), and one flush of the queue's
 * keys mid-run makes the sweeper re-add jobs whose first copy is still running: the same step then runs
 * on two workers at once. The lease must still keep every request ID to one caller at a time.
 *
 * How "at a time" is read from the partner's ledger (see overlappingPosts): a POST is in flight from its
 * arrival until its answer was written or its connection closed (finished_at), and never longer than
 * PARTNER_TIMEOUT_MS after its arrival, since by then the client that sent it had given up: a `hang`
 * fault keeps the partner's side open for two minutes after our client left, and an answer written to
 * nobody is not a concurrent call. Only POSTs count: polls (GET) are reads and may run side by side.
 */
describe('Invariant 5: at-least-once jobs, exactly-once effects: three workers on the same orders never send one request ID twice at once', () => {
  const stack = useStack({ worker: false, beforeClose: stopAllProcesses });
  let workers: AppProcess[];
  beforeAll(async () => {
    workers = [1, 2, 3].map((n) => spawnWorker(stack.env, { label: `worker ${n}` }));
    await Promise.all(workers.map((w) => w.ready()));
  });

  it(`${N} orders with faults on a share of the calls: no overlapping sends, one card per order, ledger = database`, async () => {
    const control = stack.sim.control;
    const timeoutMs = stack.config.PARTNER_TIMEOUT_MS;
    // Matched in this order; each draws its share among the requests still unmatched.
    await control.addFault({ endpoint: 'cards', mode: 'hang', share: 0.15 }); // card issued, answer held past the timeout
    await control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: 1_300, share: 0.2 }); // outlasts the timeout: repeats get 409
    await control.addFault({ endpoint: 'cards', mode: 'come_back_later', latency_ms: 800, share: 0.2 }); // 409 until the card is ready
    await control.addFault({ endpoint: 'pull_requests', mode: 'hang', share: 0.2 }); // created, answer held
    await control.addFault({ endpoint: 'pull_requests', mode: 'error_before_issue', share: 0.15 }); // 503, not created: poll 404, create again, same ID
    await control.addFault({ endpoint: 'pull_request_status', mode: 'latency', latency_ms: 300, share: 0.3 });

    const modes: Mode[] = Array.from({ length: N }, (_, i) => (i % 3 === 2 ? 'async' : 'sync'));
    const startedAt = Date.now();
    const placed: OrderView[] = [];
    const flushes: { keys: number; postsInFlight: number }[] = [];
    const youngPostsInFlight = async () =>
      (await control.ledger()).requests.filter((r) => r.method === 'POST' && !r.finished_at && Date.now() - Date.parse(r.at) < 500).length;
    // Once in each half: as soon as several POSTs are in flight (or at the end of the half), flush. Their
    // jobs vanish and the sweepers put the steps back while the first copies still run, on whichever
    // worker takes them: the lease is all that stands between the two copies and a second send.
    for (const [i, mode] of modes.entries()) {
      placed.push(await placeOrder(stack, mode));
      const half = i < N / 2 ? 0 : 1;
      if (flushes.length > half) continue;
      const inFlight = await youngPostsInFlight();
      if (inFlight >= 4 || i === N / 2 - 1 || i === N - 1) flushes.push({ postsInFlight: inFlight, keys: await flushAll(stack) });
    }

    const orders = await waitForAllEnded(stack, placed.map((o) => o.id), 45_000);
    const elapsed = Date.now() - startedAt;
    const ledger = await control.ledger();
    const db = await dbPicture(stack);

    const posts = ledger.requests.filter((r) => r.method === 'POST');
    const retried = new Map<string, number>();
    for (const p of posts) retried.set(p.request_id!, (retried.get(p.request_id!) ?? 0) + 1);
    const sameIdResends = [...retried.values()].filter((n) => n > 1).length;
    const heldPastTimeout = posts.filter((p) => !p.finished_at || Date.parse(p.finished_at) > inFlightUntil(p, timeoutMs)).length;
    const completedBy = new Map<number | null, number>();
    for (const e of db.events.filter((ev) => ev.type === 'completed')) completedBy.set(pidOfActor(e.actor), (completedBy.get(pidOfActor(e.actor)) ?? 0) + 1);
    const overlaps = overlappingPosts(ledger, timeoutMs);

    summary('three workers, same orders', {
      orders: N,
      elapsed: ms(elapsed),
      posts: posts.length,
      request_ids_sent_more_than_once: sameIdResends,
      posts_open_past_client_timeout: heldPastTimeout,
      flushes: flushes.map((f) => `${f.keys}keys/${f.postsInFlight}posts_in_flight`).join(','),
      completed_per_worker: workers.map((w) => completedBy.get(w.pid) ?? 0).join('/'),
      overlaps: overlaps.length,
      partner_cards: ledger.cards.length,
      stored_cards: db.cards.length,
    });

    // The scenario did what it is meant to: same-ID resends happened, and on more than one worker.
    expect(sameIdResends).toBeGreaterThan(0);
    expect([...completedBy.keys()].filter((pid) => pid !== null).length).toBeGreaterThan(1);
    // The rule, and what it protects; all at once, so a failure shows every violation.
    expect({
      requestIdsSentTwiceAtOnce: await explainOverlaps(stack, overlaps),
      notCompleted: orders.filter((o) => o.status !== 'completed').map((o) => `${o.id} ${o.status}`),
      cardProblems: cardProblems(orders, ledger, db),
      invariants: checkInvariants(await snapshot(stack.db.url), ledger),
    }).toEqual({ requestIdsSentTwiceAtOnce: [], notCompleted: [], cardProblems: [], invariants: [] });
    expect(new Set(db.cards.map((c) => c.partner_card_id))).toEqual(new Set(ledger.cards.map((c) => c.id)));
    expect(workers.every((w) => w.exitInfo === null)).toBe(true);
  });
});
