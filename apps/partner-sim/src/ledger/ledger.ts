import type { LedgerCard, LedgerPull, LedgerRequest } from '@cardpull/sim-contract';
import { isoWithOffset } from '../common/time';

export type { LedgerCard, LedgerPull, LedgerRequest };

// Long benchmark runs would otherwise grow the request list without bound; cards are never dropped.
const MAX_REQUESTS = 200_000;

export class Ledger {
  private readonly requests: LedgerRequest[] = [];
  private readonly cards: LedgerCard[] = [];
  private readonly pulls: LedgerPull[] = [];

  openRequest(method: string, path: string, requestId: string | null): LedgerRequest {
    const entry: LedgerRequest = {
      at: isoWithOffset(Date.now()),
      finished_at: null,
      method,
      path,
      request_id: requestId,
      status: null,
      auth: null,
    };
    this.requests.push(entry);
    if (this.requests.length > MAX_REQUESTS) this.requests.splice(0, MAX_REQUESTS / 10);
    return entry;
  }

  /** The request is no longer in flight (answer sent or connection gone); the first call wins. */
  finishRequest(entry: LedgerRequest, at = Date.now()): void {
    entry.finished_at ??= isoWithOffset(at);
  }

  recordCard(card: LedgerCard): void {
    this.cards.push(card);
  }

  /** A pull starts running under `requestId`; finish it with `finishPull`. */
  acceptPull(requestId: string, via: 'sync' | 'async'): LedgerPull {
    const pull: LedgerPull = { request_id: requestId, via, accepted_at: isoWithOffset(Date.now()), finished_at: null, outcome: null, card_id: null, error_code: null };
    this.pulls.push(pull);
    return pull;
  }

  finishPull(pull: LedgerPull, end: { cardId: string } | { errorCode: string }): void {
    pull.finished_at = isoWithOffset(Date.now());
    if ('cardId' in end) {
      pull.outcome = 'card';
      pull.card_id = end.cardId;
    } else {
      pull.outcome = 'error';
      pull.error_code = end.errorCode;
    }
  }

  /** Every list, limited to what happened at or after `since` (epoch ms) when given (pulls: accepted then). */
  view(since?: number): { requests: LedgerRequest[]; cards: LedgerCard[]; pulls: LedgerPull[] } {
    const after = (iso: string) => since === undefined || Date.parse(iso) >= since;
    return {
      requests: this.requests.filter((r) => after(r.at)).map((r) => ({ ...r })),
      cards: this.cards.filter((c) => after(c.issued_at)).map((c) => ({ ...c })),
      pulls: this.pulls.filter((p) => after(p.accepted_at)).map((p) => ({ ...p })),
    };
  }
}
