import type { FaultMode } from './fault-spec';

/** One partner request as received (control and health calls are not recorded). */
export interface LedgerRequest {
  /** When the request arrived. */
  at: string;
  /**
   * When it stopped being in flight: the answer was written to the socket, or the connection closed without
   * one (a reset fault, or a client that gave up on a held answer). Null while it is still open. With `at`
   * it tells whether two requests carrying one request ID overlapped in time (invariant 5).
   */
  finished_at: string | null;
  method: string;
  path: string;
  /** X-RequestId (POST /cards), the body's request_id (POST /pull_requests) or the path's (GET /pull_requests/:id). */
  request_id: string | null;
  /** HTTP status sent; null while not answered yet, or when the connection was reset without an answer. */
  status: number | null;
  /** 'ok', or the error code the signature check answered with; null when no check ran (unknown route). */
  auth: 'ok' | string | null;
  /** The delivery fault that hit it. */
  fault?: FaultMode;
  /** The reading of the spec that changed its answer (READING_MODES: business_first, read_lag, ...). */
  reading?: FaultMode;
}

/**
 * One pull the partner accepted and ran (a sync pull once it starts; a pull request once created): the
 * partner's truth of "could request ID X still yield a card at time T" (accepted at or before T and not
 * ended in `error` by then). A chaos run checks from it that no new request ID was minted while an earlier
 * one of the order could still yield a card.
 */
export interface LedgerPull {
  request_id: string;
  via: 'sync' | 'async';
  accepted_at: string;
  finished_at: string | null;
  /** 'card' (issued: card_id), 'error' (no card: error_code), null while running. */
  outcome: 'card' | 'error' | null;
  card_id: string | null;
  error_code: string | null;
}

/** Every card ever issued, with its secrets: the ground truth a chaos run compares the service against. */
export interface LedgerCard {
  id: string;
  code: string;
  pin_code: string | null;
  amount: number;
  gift_card_code: string;
  request_id: string;
  via: 'sync' | 'async';
  issued_at: string;
}
