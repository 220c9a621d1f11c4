-- AlterTable
ALTER TABLE "balance_samples" ADD COLUMN     "runway_hours" DOUBLE PRECISION,
ADD COLUMN     "runway_state" TEXT NOT NULL DEFAULT 'ok',
ADD COLUMN     "spend_per_minute" DOUBLE PRECISION NOT NULL DEFAULT 0;
