/**
 * What one partner call meant, per ARCHITECTURE.md "Partner calls and their classification".
 * The client classifies; the jobs decide what to do next. The client never retries.
 */
export type PartnerEndpoint =
  | 'listGiftCards'
  | 'getGiftCard'
  | 'createCard'
  | 'getCard'
  | 'createPullRequest'
  | 'getPullRequest'
  | 'getInventory'
  | 'getBalance';

/** Business errors that end a request ID for good. */
export type DefinitiveCode = 'gift_card_not_found' | 'invalid_amount' | 'out_of_stock' | 'not_enough_funds';

export type UnknownReason =
  | 'timeout'
  /** The connection broke after the request may have been written (a reset, a socket closed mid-answer). */
  | 'network'
  /** No connection was ever made (refused, DNS failure, connect timeout): the request was never written. */
  | 'not_connected'
  | 'server_error'
  | 'rate_limited'
  | 'in_progress'
  | 'unparseable'
  | 'unexpected'
  /** Never sent: our own fleet-wide limit held it back (only calls made without a permit, never a pull). */
  | 'held_back';

export type PartnerOutcome<T> =
  | { kind: 'success'; value: T; httpStatus: number }
  /** gift_card_not_found, invalid_amount (order fails) or out_of_stock, not_enough_funds (wait, then a new request ID). */
  | { kind: 'definitive'; code: DefinitiveCode; message: string; httpStatus: number }
  /** unauthorized, invalid_signature: our credentials or configuration are wrong; nothing is failed. */
  | { kind: 'credentials'; code: 'unauthorized' | 'invalid_signature'; message: string; httpStatus: number }
  /** 422 unprocessable_entity on pull-request creation: our earlier create reached the partner. */
  | { kind: 'request_id_used'; message: string; httpStatus: number }
  /** 404 pull_request_not_found / card_not_found when reading a resource by our ID. */
  | { kind: 'not_found'; code: string; message: string; httpStatus: number }
  /**
   * Timeout, network error, 5xx, 429, unknown code, "come back later", malformed answer: retry the same ID.
   * `retryAfterMs`: the partner's Retry-After, when it sent one (the same ID is not sent again before it).
   */
  | { kind: 'unknown'; reason: UnknownReason; message: string; httpStatus?: number; code?: string; retryAfterMs?: number };

export type OutcomeKind = PartnerOutcome<unknown>['kind'];

export const isSuccess = <T>(o: PartnerOutcome<T>): o is Extract<PartnerOutcome<T>, { kind: 'success' }> =>
  o.kind === 'success';
