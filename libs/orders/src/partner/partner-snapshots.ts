import { Inject, Injectable, Logger } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PartnerClient, type Balance, type Inventory, type PartnerOutcome } from '@cardpull/partner-client';
import { PartnerStateRepository } from './partner-state.repository';

export interface Snapshot<T> {
  data: T;
  fetchedAt: Date;
  /** True when the partner could not be asked and this is an older copy. */
  stale: boolean;
}

/**
 * The partner's balance and inventories, cached in Postgres for PARTNER_CACHE_TTL_MS (shared by the API's
 * views, the health probe, the operations page and the balance watch), so dashboards and probes do not
 * hammer the partner.
 */
@Injectable()
export class PartnerSnapshots {
  private readonly log = new Logger(PartnerSnapshots.name);
  private readonly inflight = new Map<string, Promise<Snapshot<unknown> | null>>();

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'PARTNER_CACHE_TTL_MS'>,
    private readonly stored: PartnerStateRepository,
    private readonly partner: PartnerClient,
  ) {}

  balance(maxAgeMs = this.config.PARTNER_CACHE_TTL_MS): Promise<Snapshot<Balance> | null> {
    return this.get('balance', maxAgeMs, () => this.partner.getBalance()) as Promise<Snapshot<Balance> | null>;
  }

  inventory(giftCardCode: string, maxAgeMs = this.config.PARTNER_CACHE_TTL_MS): Promise<Snapshot<Inventory> | null> {
    return this.get(`inventory:${giftCardCode}`, maxAgeMs, () => this.partner.getInventory(giftCardCode)) as Promise<Snapshot<Inventory> | null>;
  }

  /** Last outcome of a refresh that failed, for the health probe (null after a success). */
  lastFailure: { key: string; outcome: string; message: string; at: Date } | null = null;

  private get(key: string, maxAgeMs: number, fetch: () => Promise<PartnerOutcome<unknown>>): Promise<Snapshot<unknown> | null> {
    // maxAgeMs 0 wants a read made after this call (a proof): it never joins a read already under way.
    if (maxAgeMs === 0) return this.load(key, maxAgeMs, fetch);
    const existing = this.inflight.get(key);
    if (existing) return existing;
    const run = this.load(key, maxAgeMs, fetch).finally(() => this.inflight.delete(key));
    this.inflight.set(key, run);
    return run;
  }

  private async load(key: string, maxAgeMs: number, fetch: () => Promise<PartnerOutcome<unknown>>): Promise<Snapshot<unknown> | null> {
    // Fresh or not by the database's clock (fetched_at is the database's too): a worker's skew cannot make an old read pass.
    const cached = await this.stored.snapshot(key, maxAgeMs);
    if (cached?.fresh) return { data: cached.data, fetchedAt: cached.fetchedAt, stale: false };
    const out = await fetch();
    if (out.kind === 'success') {
      this.lastFailure = null;
      return { data: out.value, fetchedAt: await this.stored.saveSnapshot(key, out.value), stale: false };
    }
    this.lastFailure = { key, outcome: out.kind, message: out.message, at: new Date() };
    this.log.warn({ key, outcome: out.kind, message: out.message }, 'partner snapshot refresh failed');
    return cached ? { data: cached.data, fetchedAt: cached.fetchedAt, stale: true } : null;
  }
}
