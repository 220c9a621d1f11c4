import { loadOrExit, loadServiceConfig } from '@cardpull/config';
import { createPgPool } from '@cardpull/db';
import { reencryptCards } from '@cardpull/orders';
import { Vault } from '@cardpull/vault';

/**
 * `npm run vault:reencrypt`: after putting a new key first in CARD_ENCRYPTION_KEYS (keeping the old ones
 * after it), re-seal every stored card with it. Safe to run while the service runs, and to re-run.
 */
async function main(): Promise<void> {
  const config = loadOrExit(() => loadServiceConfig());
  const pool = createPgPool(config.DATABASE_URL, 2, { preparedStatements: config.DATABASE_PREPARED_STATEMENTS });
  try {
    const vault = new Vault(config.CARD_ENCRYPTION_KEYS);
    const report = await reencryptCards(pool, vault);
    process.stdout.write(
      `Re-encrypted ${report.reencrypted} card(s) with key "${vault.activeKeyId}"; ${report.alreadyActive} already used it.\n`,
    );
  } finally {
    await pool.end();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`vault:reencrypt failed: ${error.message}\n`);
  process.exit(1);
});
