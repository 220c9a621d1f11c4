import type { SimConfig } from '@cardpull/config';
import type { LedgerCard, LedgerPull, LedgerRequest } from './ledger';

/** GET /_sim/state of the simulator's control API. */
export interface SimStateView {
  mode: SimConfig['SIM_MODE'];
  balance: number;
  stocks: Record<string, { unlimited: true } | { unlimited: false; quantities: Record<string, number> }>;
  counts: { cards: number; pull_requests: number; sync_pulls: number };
}

/** GET /_sim/ledger: every request, card and pull the simulator saw. */
export interface LedgerView {
  requests: LedgerRequest[];
  cards: LedgerCard[];
  pulls: LedgerPull[];
}
