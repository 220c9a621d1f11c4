import { Injectable, type OnModuleInit } from '@nestjs/common';
import { PartnerCallListeners } from '@cardpull/partner-client';
import { PartnerStateRepository, type PartnerErrorGroups, type PartnerErrorRow } from './partner-state.repository';

/** Keep this many recent partner errors for the operations page. */
const KEEP_ERRORS = 500;

/**
 * Records every partner answer that was not a success (recent partner errors on the operations page).
 * Best effort: a failed insert never fails the call that reported it.
 */
@Injectable()
export class PartnerErrors implements OnModuleInit {
  private inserts = 0;

  constructor(
    private readonly stored: PartnerStateRepository,
    private readonly listeners: PartnerCallListeners,
  ) {}

  onModuleInit(): void {
    this.listeners.add((e) => {
      if (e.outcome === 'success') return;
      void this.stored
        .addError({
          endpoint: e.endpoint,
          outcome: e.reason ? `${e.outcome}:${e.reason}` : e.outcome,
          code: e.code ?? null,
          httpStatus: e.httpStatus ?? null,
          message: (e.message ?? '').slice(0, 500),
          requestId: e.requestId ?? null,
        })
        .then(() => (++this.inserts % 100 === 0 ? this.stored.pruneErrors(KEEP_ERRORS) : undefined))
        .catch(() => undefined);
    });
  }

  recent(limit = 50): Promise<PartnerErrorRow[]> {
    return this.stored.recentErrors(limit);
  }

  /** The errors kept, by kind, latest kind first (at most `limit` kinds). */
  groups(limit: number): Promise<PartnerErrorGroups> {
    return this.stored.errorGroups(limit);
  }
}
