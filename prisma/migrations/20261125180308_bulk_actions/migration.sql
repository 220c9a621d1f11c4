-- CreateTable
CREATE TABLE "bulk_actions" (
    "id" UUID NOT NULL,
    "action" TEXT NOT NULL,
    "filter" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "order_ids" UUID[],
    "position" INTEGER NOT NULL DEFAULT 0,
    "applied" INTEGER NOT NULL DEFAULT 0,
    "skipped" INTEGER NOT NULL DEFAULT 0,
    "state" TEXT NOT NULL DEFAULT 'running',
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "bulk_actions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "bulk_actions_state_created_at_idx" ON "bulk_actions"("state", "created_at");
