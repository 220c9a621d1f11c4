import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { setupTracing } from '@cardpull/platform';
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
  const stack = useStack();

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
});
