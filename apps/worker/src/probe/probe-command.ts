import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadServiceConfig, type ServiceConfig } from '@cardpull/config';
import { createPgPool } from '@cardpull/db';
import { OrderBuyer } from './probe-buyer';
import { BURST_MAX, runProbe } from './probe';
import { probeReport } from './probe-report';

export const PROBE_USAGE = `usage: npm run probe -- [--out partner-profile.json] [--no-buy] [--burst 30] [--max-calls 120]
                        [--production-spend <minor units>]
  Learns how the configured partner (PARTNER_ENV, PARTNER_BASE_URL) answers on the points its specification
  leaves "not shown", writes the partner profile (JSON, default PARTNER_PROFILE) and prints a report with a
  verdict per point: "as we assume", "differs: set X=Y" or "could not tell".
  It buys at most one card, of the smallest face value, as an order of the client "probe" that the worker
  finishes and stores like any other (--no-buy: none). Against production it runs only with
  --production-spend naming the most that card may cost, in minor units (1000 is 10.00 EUR).
  Exit code: 0, or 2 when a point differs from the settings (the worker would refuse to start with them).`;

export interface ProbeIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** The command, apart from the process: its exit code. Refuses production without a spend limit before any call. */
export async function probeCommand(argv: string[], env: Record<string, string | undefined> = process.env, io: ProbeIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) }): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        out: { type: 'string' },
        'no-buy': { type: 'boolean', default: false },
        burst: { type: 'string', default: '30' },
        'max-calls': { type: 'string', default: '120' },
        'production-spend': { type: 'string' },
        'repeat-after-ms': { type: 'string', default: '150' },
        help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    io.err(`${(error as Error).message}\n${PROBE_USAGE}\n`);
    return 1;
  }
  if (values.help) return io.out(`${PROBE_USAGE}\n`), 0;
  const burst = Number(values.burst);
  const maxCalls = Number(values['max-calls']);
  const repeatAfterMs = Number(values['repeat-after-ms']);
  const spend = values['production-spend'] === undefined ? undefined : Number(values['production-spend']);
  if (![burst, maxCalls, repeatAfterMs].every((n) => Number.isInteger(n) && n >= 0) || burst > BURST_MAX || (spend !== undefined && (!Number.isInteger(spend) || spend <= 0))) {
    io.err(`--burst (at most ${BURST_MAX}), --max-calls, --repeat-after-ms and --production-spend take whole numbers (--production-spend above 0)\n${PROBE_USAGE}\n`);
    return 1;
  }
  let config: ServiceConfig;
  try {
    config = loadServiceConfig(env);
  } catch (error) {
    io.err(`probe: ${(error as Error).message}\n`);
    return 1;
  }
  const production = config.PARTNER_ENV === 'production' || (!!config.PARTNER_PRODUCTION_BASE_URL && sameUrl(config.PARTNER_PRODUCTION_BASE_URL, config.PARTNER_BASE_URL));
  if (production && spend === undefined) {
    io.err(
      `probe: refusing to probe production (${config.PARTNER_BASE_URL}) without --production-spend: name the most the probe's one card may cost, in minor units of ${config.PARTNER_CURRENCY} (e.g. --production-spend 1000), or --production-spend with --no-buy to buy nothing. Nothing was sent.\n`,
    );
    return 1;
  }
  const noBuy = values['no-buy'];
  const pool = noBuy ? undefined : createPgPool(config.DATABASE_URL, 2, { preparedStatements: config.DATABASE_PREPARED_STATEMENTS });
  try {
    const profile = await runProbe({
      credentials: { baseUrl: config.PARTNER_BASE_URL, apiKey: config.PARTNER_API_KEY, identifier: config.PARTNER_IDENTIFIER, sharedKeyHex: config.PARTNER_SHARED_KEY },
      env: production ? 'production' : 'staging',
      configured: config,
      // The longest deadline the service gives a call: the probe's one card is a sync pull (PARTNER_TIMEOUT_SYNC_MS).
      timeoutMs: Math.max(config.PARTNER_TIMEOUT_MS, config.PARTNER_TIMEOUT_SYNC_MS, 1000),
      maxCalls,
      burst,
      buyer: pool ? new OrderBuyer(pool, config.PARTNER_DISCOUNT_UNIT) : null,
      ...(production ? { spendCapMinor: spend } : {}),
      repeatAfterMs,
    });
    const out = values.out ?? config.PARTNER_PROFILE;
    writeFileSync(out, `${JSON.stringify(profile, null, 2)}\n`);
    io.out(probeReport(profile));
    io.out(`\nprofile written to ${out}\n`);
    return profile.findings.some((f) => f.verdict === 'differs' && f.setting) ? 2 : 0;
  } finally {
    await pool?.end();
  }
}

const sameUrl = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
