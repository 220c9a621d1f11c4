-- CreateEnum
CREATE TYPE "OrderStatus" AS ENUM ('pending', 'in_progress', 'awaiting_funds', 'awaiting_stock', 'completed', 'failed', 'needs_attention');

-- CreateEnum
CREATE TYPE "PullMode" AS ENUM ('sync', 'async');

-- CreateEnum
CREATE TYPE "AttemptState" AS ENUM ('created', 'sent', 'succeeded', 'failed_definitive', 'unknown');

-- CreateEnum
CREATE TYPE "OrderStep" AS ENUM ('sync_call', 'async_create', 'async_poll', 'resume_check');

-- CreateTable
CREATE TABLE "orders" (
    "id" UUID NOT NULL,
    "client" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "status" "OrderStatus" NOT NULL,
    "mode" "PullMode" NOT NULL,
    "gift_card_code" TEXT NOT NULL,
    "amount" INTEGER NOT NULL,
    "metadata" JSONB,
    "error_code" TEXT,
    "error_message" TEXT,
    "next_step" "OrderStep",
    "next_step_at" TIMESTAMPTZ(3),
    "step_seq" INTEGER NOT NULL DEFAULT 0,
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "wait_deadline" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "orders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attempts" (
    "request_id" TEXT NOT NULL,
    "order_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "kind" "PullMode" NOT NULL,
    "state" "AttemptState" NOT NULL,
    "partner_status" TEXT,
    "error_code" TEXT,
    "error_message" TEXT,
    "call_count" INTEGER NOT NULL DEFAULT 0,
    "first_sent_at" TIMESTAMPTZ(3),
    "last_sent_at" TIMESTAMPTZ(3),
    "unknown_since" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "attempts_pkey" PRIMARY KEY ("request_id")
);

-- CreateTable
CREATE TABLE "cards" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "request_id" TEXT NOT NULL,
    "partner_card_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "code_enc" BYTEA NOT NULL,
    "pin_enc" BYTEA,
    "expire_at" TIMESTAMPTZ(3),
    "amount" INTEGER NOT NULL,
    "gift_card_code" TEXT NOT NULL,
    "pdf_url" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cards_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "order_events" (
    "id" BIGSERIAL NOT NULL,
    "order_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "type" TEXT NOT NULL,
    "from_status" "OrderStatus",
    "to_status" "OrderStatus",
    "request_id" TEXT,
    "actor" TEXT NOT NULL,
    "detail" JSONB,

    CONSTRAINT "order_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "catalog_gift_cards" (
    "code" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "refreshed_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "catalog_gift_cards_pkey" PRIMARY KEY ("code")
);

-- CreateTable
CREATE TABLE "partner_circuit" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "state" TEXT NOT NULL DEFAULT 'closed',
    "opened_at" TIMESTAMPTZ(3),
    "closed_at" TIMESTAMPTZ(3),
    "last_error_code" TEXT,
    "last_error_message" TEXT,
    "last_probe_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "partner_circuit_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "orders_next_step_at_idx" ON "orders"("next_step_at");

-- CreateIndex
CREATE INDEX "orders_status_id_idx" ON "orders"("status", "id");

-- CreateIndex
CREATE INDEX "orders_gift_card_code_id_idx" ON "orders"("gift_card_code", "id");

-- CreateIndex
CREATE UNIQUE INDEX "orders_client_idempotency_key_key" ON "orders"("client", "idempotency_key");

-- CreateIndex
CREATE UNIQUE INDEX "attempts_order_id_seq_key" ON "attempts"("order_id", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "cards_order_id_key" ON "cards"("order_id");

-- CreateIndex
CREATE UNIQUE INDEX "cards_request_id_key" ON "cards"("request_id");

-- CreateIndex
CREATE UNIQUE INDEX "cards_partner_card_id_key" ON "cards"("partner_card_id");

-- CreateIndex
CREATE INDEX "order_events_order_id_id_idx" ON "order_events"("order_id", "id");

-- AddForeignKey
ALTER TABLE "attempts" ADD CONSTRAINT "attempts_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cards" ADD CONSTRAINT "cards_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cards" ADD CONSTRAINT "cards_request_id_fkey" FOREIGN KEY ("request_id") REFERENCES "attempts"("request_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_events" ADD CONSTRAINT "order_events_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;
