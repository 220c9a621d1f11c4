import { INVALID_SPAN_CONTEXT, context, isSpanContextValid, propagation, trace, SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';

/**
 * OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (or a test gives an exporter): one
 * trace per order, from POST /v1/orders through the queue (each job carries its W3C traceparent) to every
 * partner call and the commit of its card. Spans carry the order id and request ID, never a card's code,
 * PIN or PDF link. Without a provider the API's spans are no-ops: the code paths are the same either way.
 */

const TRACER = 'cardpull';
let provider: TracerProvider | null = null;

/** Registers the global provider (once per process): OTLP over HTTP to `endpoint`, or the exporter given (tests). */
export function setupTracing(opts: { service: string; endpoint?: string; exporter?: SpanExporter }): boolean {
  if (provider) return true;
  let exporter = opts.exporter;
  if (!exporter && opts.endpoint) {
    // Loaded only when asked for: nothing of the OTLP exporter runs in a process without traces.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    exporter = new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/$/, '')}/v1/traces` });
  }
  if (!exporter) return false;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  provider = new TracerProvider({
    // service.name tells the API's spans from the workers' in the trace view.
    resource: resourceFromAttributes({ 'service.name': opts.service }),
    spanProcessors: [opts.exporter ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter })],
  });
  trace.setGlobalTracerProvider(provider);
  return true;
}

/** What withSpan hands its function while tracing is off: a span that records nothing (as the no-op tracer's). */
const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Whether this process records traces (a provider is registered). */
export const tracingOn = (): boolean => provider !== null;

/** Flushes and stops the provider (the process is ending). */
export async function shutdownTracing(): Promise<void> {
  await provider?.shutdown().catch(() => undefined);
}

/**
 * Runs `fn` in a new span (a child of the active one, or of `parent`), ended when it settles; errors are recorded.
 * Not an async function: with tracing off it hands back `fn`'s own promise, with no promise of its own
 * around it (each step runs two of these; an async wrapper's promise and await per call, per card).
 */
export function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, parent?: ReturnType<typeof context.active>): Promise<T> {
  // Tracing off: the no-op tracer would make a span that records nothing and a context for it, per call.
  if (!provider) {
    try {
      return fn(NO_SPAN);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }
  const tracer = trace.getTracer(TRACER);
  return tracer.startActiveSpan(name, { attributes }, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The active trace as a W3C traceparent (for a job's data), or undefined when there is none. */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The context a job's traceparent continues (the active one when it has none). */
export function contextFrom(traceparent: string | null | undefined) {
  return traceparent ? propagation.extract(context.active(), { traceparent }) : context.active();
}

/** The trace id of a W3C traceparent (`00-<trace id>-<span id>-<flags>`), or null when it is none. */
export function traceIdFrom(traceparent: string | null | undefined): string | null {
  const id = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent ?? '')?.[1];
  return id && !/^0+$/.test(id) ? id : null;
}

/** A span's trace id, or undefined when it records nothing (tracing off: the id is all zeros). */
export function traceIdOf(span: Span | undefined): string | undefined {
  const ctx = span?.spanContext();
  return ctx && isSpanContextValid(ctx) ? ctx.traceId : undefined;
}
