import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { setupTracing } from '@cardpull/platform';
import { ORDERS_QUEUE, jobOf, orderStepJobId } from '@cardpull/queue';
import { waitFor } from '@cardpull/testing';
import { withDb } from '../recovery/support/recovery';
import { ADMIN_ENV, ALICE, adminCall, csrfOf, login } from '../admin/support/admin';
import { createOrder, useStack, waitForOrder } from '../support/stack';

// The process's provider, with an in-memory exporter (the service itself exports over OTLP when
// OTEL_EXPORTER_OTLP_ENDPOINT is set): registered before the stack starts.
const exporter = new InMemorySpanExporter();
setupTracing({ service: 'cardpull-test', exporter });

/**
 * Issue 14, item 6: one order, one trace: POST /v1/orders (API), each of its steps (worker, through the
 * queue: the job carries the traceparent, nothing else links them), every partner call and the commit of
 * its card, with the order id and request ID as attributes and never a card's code or PIN; log lines
 * written in the trace carry its id.
 */
describe('traces: an order is one trace from intake to the card, across the API and the worker', () => {
  // Unknown outcomes give up quickly (an order in needs attention to re-drive).
  const stack = useStack({ env: { ...ADMIN_ENV, UNKNOWN_OUTCOME_WINDOW_MS: '1500' } });

  const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const intakeSpan = (orderId: string) => exporter.getFinishedSpans().find((s) => s.name === 'POST /v1/orders' && s.attributes['cardpull.order_id'] === orderId);

  it.each([
    ['sync', ['order step sync_call', 'partner createCard', 'store card']],
    ['async', ['order step async_create', 'partner createPullRequest', 'order step async_poll', 'partner getPullRequest', 'store card']],
  ] as const)('a %s order: its steps, partner calls and card commit are in the trace of its intake', async (mode, expected) => {
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500, mode });
    const order = await waitForOrder(stack, id, (o) => o.status === 'completed');
    const intake = intakeSpan(id);
    expect(intake).toBeDefined();
    const traceId = intake!.spanContext().traceId;
    const spans = spansOf(traceId);
    const names = spans.map((s) => s.name);
    for (const name of expected) expect([name, names.includes(name)]).toEqual([name, true]);
    // Every step span names the order; every partner call its request ID.
    for (const s of spans.filter((x) => x.name.startsWith('order step'))) expect(s.attributes['cardpull.order_id']).toBe(id);
    for (const s of spans.filter((x) => x.name === 'partner createCard' || x.name === 'partner createPullRequest')) expect(s.attributes['cardpull.request_id']).toBe(requestId);
    // Nothing secret: neither the card's code nor its PIN in any attribute of any span.
    const code = order.card.code as string;
    const pin = order.card.pin_code as string | null;
    const values = exporter.getFinishedSpans().flatMap((s) => Object.values(s.attributes).map(String));
    expect(values.filter((v) => v.includes(code) || (pin ? v.includes(pin) : false))).toEqual([]);
    // The intake's log line (and every line a step of the order writes) carries the trace id.
    expect(stack.logs.lines.some((l) => l.includes(`"trace_id":"${traceId}"`))).toBe(true);
  });

  const stepSpans = (orderId: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name.startsWith('order step') && s.attributes['cardpull.order_id'] === orderId);

  it('the order page shows the order\'s trace id (kept with the order at intake), to copy', async () => {
    const { id } = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 });
    await waitForOrder(stack, id, (o) => o.status === 'completed');
    const traceId = intakeSpan(id)!.spanContext().traceId;
    const page = await adminCall(stack, 'GET', `/admin/orders/${id}`, { cookie: await login(stack, ALICE), html: true });
    expect(page.text).toContain(`<code class="mono copy" data-trace-id="${traceId}"`);
  });

  it('a job re-created by the sweeper (its job lost from Redis), or one without a trace, goes on in the trace of its order\'s intake', async () => {
    await stack.stopWorker();
    // Jobs lost or made by hand, as an operator could through the job dashboard (the raw queue).
    const queue = stack.api!.get<Queue>(getQueueToken(ORDERS_QUEUE));
    const lost = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 });
    const untraced = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500, mode: 'async' });
    // One job is lost: the sweeper re-creates it from the order's row. The other is replaced by a job that
    // carries no trace (one from before the orders kept theirs). Both first land (the intake answers before
    // its enqueue).
    await waitFor('both first jobs in Redis', async () => (await queue.getJob(orderStepJobId(lost.id, 1))) && (await queue.getJob(orderStepJobId(untraced.id, 1))), 10_000);
    await queue.remove(orderStepJobId(lost.id, 1));
    await queue.remove(orderStepJobId(untraced.id, 1));
    const bare = jobOf('async_create', { orderId: untraced.id, stepSeq: 1 }, { jobId: orderStepJobId(untraced.id, 1) });
    await queue.add(bare.name, bare.data, bare.opts);
    await stack.startWorker();
    for (const o of [lost, untraced]) {
      await waitForOrder(stack, o.id, (x) => x.status === 'completed');
      const traceId = intakeSpan(o.id)!.spanContext().traceId;
      const steps = stepSpans(o.id);
      expect(steps.length).toBeGreaterThan(0);
      expect(steps.map((s) => [s.name, s.spanContext().traceId])).toEqual(steps.map((s) => [s.name, traceId]));
      expect(spansOf(traceId).map((s) => s.name)).toContain('store card');
    }
  });

  it('a re-drive by an operator goes on in the trace of the order\'s intake: its span, then the re-driven step', async () => {
    const { id } = await createOrder(stack, { gift_card_code: 'STG-BROKEN', amount: 1000 });
    await waitForOrder(stack, id, (o) => o.status === 'needs_attention', 30_000);
    // Past the window its request ID is still asked, ever less often: an hour in, the next ask is an hour
    // away, so no step holds the order when the operator acts.
    await withDb(stack, async (db) => {
      await db.query(`UPDATE attempts SET unknown_since = now() - interval '1 hour' WHERE order_id = $1`, [id]);
      await waitFor('its next ask an hour away', async () => {
        const { rows } = await db.query("SELECT 1 FROM orders WHERE id = $1 AND next_step_at > now() + interval '10 minutes'", [id]);
        return rows.length === 1 || null;
      }, 30_000);
    });
    const cookie = await login(stack, ALICE);
    const page = await adminCall(stack, 'GET', `/admin/orders/${id}`, { cookie, html: true });
    const res = await adminCall(stack, 'POST', `/admin/orders/${id}/redrive`, { cookie, form: { csrf: csrfOf(page.text), reason: 'trace test' } });
    expect(res.status).toBe(303);
    const { rows } = await withDb(stack, (db) => db.query<{ step_seq: number }>('SELECT step_seq FROM orders WHERE id = $1', [id]));
    const seq = rows[0]!.step_seq;
    const redriven = await waitFor('the re-driven step', async () => stepSpans(id).find((s) => s.attributes['cardpull.step_seq'] === seq) ?? null, 20_000);
    const traceId = intakeSpan(id)!.spanContext().traceId;
    const redrive = exporter.getFinishedSpans().find((s) => s.name === 'operator redrive' && s.attributes['cardpull.order_id'] === id);
    expect([redrive?.spanContext().traceId, redriven.spanContext().traceId]).toEqual([traceId, traceId]);
    // Its parent may be the re-drive's span (its job), or a span of the sweeper when that re-created the
    // step's job first (the same job id): which one is a race; that the step stays in the order's trace is not.
  });
});
