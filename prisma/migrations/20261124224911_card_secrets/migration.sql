-- Card secrets only to those allowed (issue 11): the PDF link is sealed like code and PIN (pdf_enc: pdf_url stays for rows from before, until npm run vault:reencrypt seals them), and an order remembers whether the API key that created it had cards:read (callback_secrets), which alone decides whether its callbacks carry the card's secrets. Existing orders default to false (fail closed)

-- AlterTable
ALTER TABLE "cards" ADD COLUMN     "pdf_enc" BYTEA;

-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "callback_secrets" BOOLEAN NOT NULL DEFAULT false;
