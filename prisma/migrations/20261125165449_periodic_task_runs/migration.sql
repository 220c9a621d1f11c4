-- CreateTable
CREATE TABLE "periodic_task_runs" (
    "task" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "lease_until" TIMESTAMPTZ(3) NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "runs" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "periodic_task_runs_pkey" PRIMARY KEY ("task")
);
