-- CreateTable
CREATE TABLE "balance_samples" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "partner_balance" BIGINT NOT NULL,
    "ledger_balance" BIGINT NOT NULL,
    "in_flight" BIGINT NOT NULL,
    "tolerance" BIGINT NOT NULL,
    "drift" BIGINT NOT NULL,
    "state" TEXT NOT NULL,
    "window_from" TIMESTAMPTZ(3),

    CONSTRAINT "balance_samples_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "balance_samples_at_idx" ON "balance_samples"("at");
