-- Spend guard (issue 11): the face value each client ordered per day (UTC), raised in the transaction that records the order

-- CreateTable
CREATE TABLE "client_spend" (
    "client" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "total" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "client_spend_pkey" PRIMARY KEY ("client","day")
);
