-- The order's trace (W3C traceparent of its intake request, tracing on only): jobs re-created from the row
-- (the sweeper, a re-drive, the reconciler) go on in it.
ALTER TABLE "orders" ADD COLUMN "trace_parent" TEXT;
