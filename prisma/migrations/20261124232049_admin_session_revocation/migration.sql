-- Operators' sessions ended by a logout before their expiry (issue 11): the guard refuses a revoked session id, shared by every API process

-- CreateTable
CREATE TABLE "admin_revoked_sessions" (
    "sid" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "admin_revoked_sessions_pkey" PRIMARY KEY ("sid")
);

-- CreateIndex
CREATE INDEX "admin_revoked_sessions_expires_at_idx" ON "admin_revoked_sessions"("expires_at");
