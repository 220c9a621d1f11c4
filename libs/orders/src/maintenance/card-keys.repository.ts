import type { Pool } from 'pg';
import { Vault, openCardField, sealCardField } from '@cardpull/vault';

export interface ReencryptReport {
  reencrypted: number;
  alreadyActive: number;
}

/**
 * Key rotation: re-seals every card not yet under the active key (the first of CARD_ENCRYPTION_KEYS), and
 * seals the PDF link of cards stored before it was sealed (pdf_url in clear), in
 * batches, each batch one transaction with its rows locked, so it can run while the service runs and can be
 * interrupted and re-run at any time. Afterwards an old key can be removed from the setting.
 */
export async function reencryptCards(pool: Pool, vault: Vault, batchSize = 500): Promise<ReencryptReport> {
  let reencrypted = 0;
  for (;;) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // Also the rows from before pdf_enc, whose PDF link is still in clear (sealed here and cleared), and
      // those sealed before the order was bound (blob version 1: re-sealed bound to it).
      const { rows } = await client.query<{ id: string; order_id: string; key_id: string; code_enc: Buffer; pin_enc: Buffer | null; pdf_enc: Buffer | null; pdf_url: string | null }>(
        'SELECT id, order_id, key_id, code_enc, pin_enc, pdf_enc, pdf_url FROM cards WHERE key_id <> $1 OR pdf_url IS NOT NULL OR get_byte(code_enc, 0) = 1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED',
        [vault.activeKeyId, batchSize],
      );
      for (const row of rows) {
        const card = { id: row.id, orderId: row.order_id, keyId: row.key_id };
        const code = openCardField(vault, card, 'code', row.code_enc);
        const pin = row.pin_enc ? openCardField(vault, card, 'pin', row.pin_enc) : null;
        const pdf = row.pdf_enc ? openCardField(vault, card, 'pdf', row.pdf_enc) : row.pdf_url;
        // Sealed again under the active key, now bound to the order too.
        const sealedCode = sealCardField(vault, card, 'code', code);
        const sealedPin = pin === null ? null : sealCardField(vault, card, 'pin', pin);
        const sealedPdf = pdf === null ? null : sealCardField(vault, card, 'pdf', pdf);
        await client.query('UPDATE cards SET key_id = $2, code_enc = $3, pin_enc = $4, pdf_enc = $5, pdf_url = NULL WHERE id = $1', [
          row.id,
          sealedCode.keyId,
          sealedCode.blob,
          sealedPin?.blob ?? null,
          sealedPdf?.blob ?? null,
        ]);
      }
      await client.query('COMMIT');
      reencrypted += rows.length;
      if (rows.length < batchSize) break;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
  const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM cards WHERE key_id = $1', [vault.activeKeyId]);
  return { reencrypted, alreadyActive: Number(rows[0]!.n) - reencrypted };
}
