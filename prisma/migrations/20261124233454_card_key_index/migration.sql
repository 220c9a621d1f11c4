-- The vault keys in use, read key by key (issue 11: the unreadable-cards gauge)

-- CreateIndex
CREATE INDEX "cards_key_id_idx" ON "cards"("key_id");
