-- The catalog change feed (issue 25): each store of the partner's catalog is compared with the one stored
-- before it, in the same transaction, and what changed is kept here; clients subscribe to `catalog.changed`.

-- AlterTable
ALTER TABLE "catalog_gift_cards" ADD COLUMN     "announced_discount" DOUBLE PRECISION;

-- CreateTable
CREATE TABLE "catalog_changes" (
    "id" BIGSERIAL NOT NULL,
    "batch_id" UUID NOT NULL,
    "detected_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "gift_card_code" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "before" JSONB,
    "after" JSONB,
    "detail" JSONB,

    CONSTRAINT "catalog_changes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event_subscriptions" (
    "client" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_subscriptions_pkey" PRIMARY KEY ("client","event_type")
);

-- CreateIndex
CREATE INDEX "catalog_changes_gift_card_code_id_idx" ON "catalog_changes"("gift_card_code", "id");

-- CreateIndex
CREATE INDEX "event_subscriptions_event_type_idx" ON "event_subscriptions"("event_type");

-- The kinds a change may have (not expressible in the Prisma schema): a writer cannot invent one.
ALTER TABLE "catalog_changes" ADD CONSTRAINT "catalog_changes_kind_check"
  CHECK ("kind" IN ('added', 'removed', 'face_values_changed', 'code_pin_changed', 'discount_changed', 'discount_scheduled'));
