import { isSpanContextValid, trace } from '@opentelemetry/api';
import type { PinoLogger } from 'nestjs-pino';

/**
 * Runs a job handler inside its own logging context, so every line logged while handling it carries
 * the job's correlation id (the job id) and the order it works on.
 */
export function runInJobContext<T>(
  logger: Pick<PinoLogger, 'runInContext'>,
  job: { id?: string | undefined; name: string; data: unknown },
  fn: () => Promise<T>,
): Promise<T> {
  const data = (job.data ?? {}) as { orderId?: unknown };
  // With tracing on, the job's span (its order's trace) names every line of the job.
  const span = trace.getActiveSpan()?.spanContext();
  return logger.runInContext(fn, {
    bindings: {
      correlationId: job.id ?? `${job.name}-${Date.now()}`,
      job: job.name,
      ...(typeof data.orderId === 'string' ? { orderId: data.orderId } : {}),
      ...(span && isSpanContextValid(span) ? { trace_id: span.traceId } : {}),
    },
  });
}
