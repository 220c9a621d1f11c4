-- CreateEnum
CREATE TYPE "CardRole" AS ENUM ('order', 'surplus', 'mismatch');

-- DropIndex
DROP INDEX "cards_order_id_key";

-- DropIndex
DROP INDEX "cards_request_id_key";

-- AlterTable
ALTER TABLE "attempts" ADD COLUMN     "not_found_since" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "cards" ADD COLUMN     "mismatch" TEXT,
ADD COLUMN     "role" "CardRole" NOT NULL DEFAULT 'order';

-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "card_id" UUID;

-- CreateIndex
CREATE INDEX "attempts_state_request_id_idx" ON "attempts"("state", "request_id");

-- CreateIndex
CREATE INDEX "cards_order_id_idx" ON "cards"("order_id");

-- CreateIndex
CREATE INDEX "cards_request_id_idx" ON "cards"("request_id");

-- CreateIndex
CREATE INDEX "cards_role_created_at_idx" ON "cards"("role", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "orders_card_id_key" ON "orders"("card_id");

-- AddForeignKey
ALTER TABLE "orders" ADD CONSTRAINT "orders_card_id_fkey" FOREIGN KEY ("card_id") REFERENCES "cards"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Each order's card so far becomes its order's card (cards were one per order until now).
UPDATE "orders" o SET "card_id" = c."id" FROM "cards" c WHERE c."order_id" = o."id";

-- Invariant 3 in the schema (not expressible in schema.prisma, and Prisma leaves CHECK constraints alone):
-- a completed order has its card, and only a completed order has one.
ALTER TABLE "orders" ADD CONSTRAINT "orders_card_iff_completed" CHECK (("status" = 'completed') = ("card_id" IS NOT NULL));
