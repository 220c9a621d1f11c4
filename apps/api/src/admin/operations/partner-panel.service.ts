import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PartnerCircuit, PartnerErrors, PartnerSnapshots, type CircuitState, type PartnerErrorGroups, type Snapshot } from '@cardpull/orders';
import { PartnerClient, type Inventory, type PartnerTimeouts } from '@cardpull/partner-client';
import { RedisCallGate, type ScopeView } from '@cardpull/traffic';
import { TimeoutError, withTimeout } from '@cardpull/platform';
import { CatalogService } from '../../catalog/catalog.service';
import { partnerProfileModel, type PartnerProfileModel, type ProfileSettings } from './partner-profile.model';

/**
 * How many causes of failure, and kinds of partner error, the overview lists (the latest first): a partner
 * failing in many ways must not push the rest of the page away. /admin/errors lists them all.
 */
export const OVERVIEW_GROUPS = 10;

/** The page never waits longer than this for the partner; a slow answer still fills the cache for later. */
const PARTNER_WAIT_MS = 2_500;

export interface PartnerPanelModel {
  env: string;
  host: string;
  balance: { amount: number; low: boolean; fetchedAt: Date; stale: boolean } | { error: string };
  lowBalanceThreshold: number;
  inventories: ({ code: string; name: string } & ({ available: string; stocks: { facialValue: number; quantity: number }[]; fetchedAt: Date; stale: boolean } | { error: string }))[];
  catalogRefreshedAt: Date | null;
  circuit: CircuitState;
  /** Partner errors by kind, the latest kinds first (at most OVERVIEW_GROUPS). */
  errors: PartnerErrorGroups;
  /** The fleet's limits per scope as they stand in Redis (null: Redis did not answer). */
  traffic: ScopeView[] | null;
  /** The deadline of each kind of call in force (PARTNER_TIMEOUT_*_MS). */
  timeouts: PartnerTimeouts;
  /** The partner's clock minus ours as this process reads it (Date headers of its answers; ARCHITECTURE.md "Partner time"). */
  clock: { offsetS: number; answers: number };
  /** What npm run probe learned of this partner (PARTNER_PROFILE), and what it says of the settings. */
  profile: PartnerProfileModel;
}

/** A snapshot, or why it is missing: the partner was slow (TimeoutError), it failed, or nothing is cached yet. */
const bounded = <T>(work: Promise<T>): Promise<T | Error> => withTimeout(work, PARTNER_WAIT_MS).catch((e: Error) => e);

/** Why a snapshot could not be shown, in words an operator can act on. */
function unavailable(result: unknown): string | null {
  if (result instanceof TimeoutError) return 'the partner is slow to answer; reload in a moment';
  if (result instanceof Error) return `could not be read: ${result.message}`;
  if (result === null) return 'the partner did not answer and nothing is cached yet';
  return null;
}

/**
 * The partner panel of the operations page: environment, balance (with the LOW_BALANCE_THRESHOLD warning),
 * inventory of every catalog gift card, the credentials circuit, the fleet's call limits and timeouts, and partner errors by kind. Balance and
 * inventories come through PartnerSnapshots (cached for PARTNER_CACHE_TTL_MS); any of them may fail
 * without failing the page.
 */
@Injectable()
export class PartnerPanel {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'LOW_BALANCE_THRESHOLD' | 'PARTNER_BASE_URL' | 'PARTNER_ENV'> & ProfileSettings,
    private readonly snapshots: PartnerSnapshots,
    private readonly circuit: PartnerCircuit,
    private readonly partnerErrors: PartnerErrors,
    private readonly catalogService: CatalogService,
    private readonly gate: RedisCallGate,
    private readonly client: PartnerClient,
  ) {}

  async build(): Promise<PartnerPanelModel> {
    // None read yet: no inventory to show, and the panel says the catalog is not loaded.
    const catalog = this.catalogService.list() ?? { cards: [], refreshedAt: null };
    const [balance, inventories, circuit, errors, traffic] = await Promise.all([
      this.balance(),
      Promise.all(catalog.cards.map((card) => this.inventory(card.code, card.name))),
      this.circuit.state(),
      this.partnerErrors.groups(OVERVIEW_GROUPS),
      this.gate.snapshot(),
    ]);
    return {
      env: this.config.PARTNER_ENV,
      host: new URL(this.config.PARTNER_BASE_URL).host,
      balance,
      lowBalanceThreshold: this.config.LOW_BALANCE_THRESHOLD,
      inventories: inventories.sort((a, b) => a.code.localeCompare(b.code)),
      catalogRefreshedAt: catalog.refreshedAt,
      circuit,
      errors,
      traffic,
      timeouts: this.client.timeouts,
      // Read after the balance and inventories above: their answers count.
      clock: { offsetS: this.client.clock.offsetMs() / 1000, answers: this.client.clock.sampleCount() },
      profile: partnerProfileModel(this.config),
    };
  }

  private async balance(): Promise<PartnerPanelModel['balance']> {
    const snap = await bounded(this.snapshots.balance());
    const why = unavailable(snap);
    if (why) return { error: why };
    const { data, fetchedAt, stale } = snap as Snapshot<{ balance: { amount: number } }>;
    return { amount: data.balance.amount, low: data.balance.amount < this.config.LOW_BALANCE_THRESHOLD, fetchedAt, stale };
  }

  private async inventory(code: string, name: string): Promise<PartnerPanelModel['inventories'][number]> {
    const snap = await bounded(this.snapshots.inventory(code));
    const why = unavailable(snap);
    if (why) return { code, name, error: why };
    const { data, fetchedAt, stale } = snap as Snapshot<Inventory>;
    const inv = data.inventories;
    return {
      code,
      name,
      available: inv?.end_to_end_api?.available_amount ?? 'unknown',
      stocks: (inv?.stocks ?? []).map((s) => ({ facialValue: s.facial_value, quantity: s.owned_quantity })),
      fetchedAt,
      stale,
    };
  }
}
