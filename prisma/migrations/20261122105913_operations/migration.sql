-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "callback_url" TEXT;

-- CreateTable
CREATE TABLE "callback_events" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "client" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "snapshot" JSONB NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "callback_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "callback_deliveries" (
    "id" BIGSERIAL NOT NULL,
    "event_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "http_status" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,

    CONSTRAINT "callback_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "partner_errors" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endpoint" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "code" TEXT,
    "http_status" INTEGER,
    "message" TEXT NOT NULL,
    "request_id" TEXT,

    CONSTRAINT "partner_errors_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "partner_snapshots" (
    "key" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "fetched_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "partner_snapshots_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "callback_events_state_next_attempt_at_idx" ON "callback_events"("state", "next_attempt_at");

-- CreateIndex
CREATE INDEX "callback_events_order_id_idx" ON "callback_events"("order_id");

-- CreateIndex
CREATE INDEX "callback_deliveries_event_id_id_idx" ON "callback_deliveries"("event_id", "id");

-- CreateIndex
CREATE INDEX "partner_errors_at_idx" ON "partner_errors"("at");

-- AddForeignKey
ALTER TABLE "callback_events" ADD CONSTRAINT "callback_events_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "callback_deliveries" ADD CONSTRAINT "callback_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "callback_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;
