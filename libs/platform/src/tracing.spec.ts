import { context } from '@opentelemetry/api';
import { currentTraceparent, traceIdOf, tracingOn, withSpan } from './tracing';

describe('withSpan with tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT): nothing is recorded, the work runs as it is (issue 22)', () => {
  it('hands the work a span that records nothing, in the context it was called from, and passes on its answer and its errors', async () => {
    expect(tracingOn()).toBe(false);
    const outer = context.active();
    const seen = await withSpan('POST /v1/orders', { 'cardpull.client': 'shop' }, async (span) => {
      span.setAttributes({ 'cardpull.order_id': 'o-1' });
      return { recording: span.isRecording(), traceId: traceIdOf(span), sameContext: context.active() === outer, traceparent: currentTraceparent() };
    });
    expect(seen).toEqual({ recording: false, traceId: undefined, sameContext: true, traceparent: undefined });
    await expect(withSpan('x', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });

  it('hands back the work\'s own promise (no wrapper of its own), and a work that throws at once still rejects, never throws', async () => {
    const work = Promise.resolve('card');
    expect(withSpan('store card', {}, () => work)).toBe(work);
    let answered: Promise<unknown> | undefined;
    expect(() => {
      answered = withSpan('x', {}, () => {
        throw new Error('thrown at once');
      });
    }).not.toThrow();
    await expect(answered).rejects.toThrow('thrown at once');
  });
});
