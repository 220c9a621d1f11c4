import { parseArgs } from 'node:util';
import { loadOrExit, loadServiceConfig } from '@cardpull/config';
import { createPgPool } from '@cardpull/db';
import { LedgerRepository } from '@cardpull/orders';
import { reconciliationReport, toCsv } from './reconciliation-report';
import { PartnerClient, partnerClientOptions } from '@cardpull/partner-client';

const USAGE = `usage: npm run reconcile:report -- [--from 2026-11-01] [--to 2026-11-23] [--format json|csv] [--verify]
  Lists every order created in [from, to) (default: the last 24 hours) with its request IDs, the partner's
  outcome of each and the stored card id, and flags any mismatch; the JSON also gives the ledger's totals. --verify also asks the partner
  (GET /cards/:id and GET /pull_requests/:id only). Exit code 2 when a row is flagged.`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { from: { type: 'string' }, to: { type: 'string' }, format: { type: 'string', default: 'json' }, verify: { type: 'boolean', default: false }, help: { type: 'boolean' } },
  });
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  const to = values.to ? new Date(values.to) : new Date();
  const from = values.from ? new Date(values.from) : new Date(to.getTime() - 24 * 3600_000);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()) || !['json', 'csv'].includes(values.format!)) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(1);
  }
  const config = loadOrExit(() => loadServiceConfig());
  const pool = createPgPool(config.DATABASE_URL, 2, { preparedStatements: config.DATABASE_PREPARED_STATEMENTS });
  const partner = values.verify ? new PartnerClient(partnerClientOptions(config)) : undefined;
  try {
    const rows = await reconciliationReport(pool, from, to, partner);
    const flagged = rows.filter((r) => r.flags.length).length;
    // The ledger's totals (every account, per partner account and currency, minor units) as they are now.
    const ledger = await new LedgerRepository(pool).totals();
    process.stdout.write(values.format === 'csv' ? toCsv(rows) : `${JSON.stringify({ from, to, orders: rows.length, flagged, ledger, rows }, null, 2)}\n`);
    process.stderr.write(`${rows.length} order(s), ${flagged} flagged; ledger: ${ledger.map((l) => `${l.account} ${l.balance} ${l.currency}`).join(', ') || 'no movement'}\n`);
    if (flagged) process.exitCode = 2;
  } finally {
    await pool.end();
    await partner?.close();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`reconcile:report failed: ${error.message}\n`);
  process.exit(1);
});
