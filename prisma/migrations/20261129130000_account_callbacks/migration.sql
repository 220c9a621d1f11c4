-- AlterTable
ALTER TABLE "callback_events" ALTER COLUMN "order_id" DROP NOT NULL;
