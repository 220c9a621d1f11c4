import { z } from 'zod';
import type { DefinitiveCode, PartnerEndpoint, PartnerOutcome } from './outcome';
import { PULL_IN_PROGRESS_CODE } from './types';

const envelopeSchema = z.object({
  errors: z.array(z.object({ code: z.string(), message: z.string().optional().default('') })).min(1),
  status: z.string().optional(),
});

/** Business error codes each endpoint may answer with, and what they mean there (spec, Errors). */
const DEFINITIVE: Partial<Record<PartnerEndpoint, readonly DefinitiveCode[]>> = {
  createCard: ['gift_card_not_found', 'invalid_amount', 'out_of_stock', 'not_enough_funds'],
  createPullRequest: ['gift_card_not_found', 'invalid_amount', 'out_of_stock', 'not_enough_funds'],
  getGiftCard: ['gift_card_not_found'],
  getInventory: ['gift_card_not_found'],
};

/** Not-found codes that mean "the partner has no such resource for this ID". */
const NOT_FOUND: Partial<Record<PartnerEndpoint, readonly string[]>> = {
  // The spec's table says pull_request_not_found; one guide page shows card_not_found for this case.
  getPullRequest: ['pull_request_not_found', 'card_not_found'],
  getCard: ['card_not_found'],
};

/**
 * Classifies a partner answer that arrived (status + parsed body). `parseSuccess` validates a 2xx body;
 * a 2xx whose body does not validate is an unknown outcome (a card we cannot read is not a card).
 * The expected status codes are checked with the error codes (a 404 gift_card_not_found is definitive,
 * an envelope code on an unexpected status is not trusted), so a proxy's error page never fails an order.
 */
export function classify<T>(
  endpoint: PartnerEndpoint,
  httpStatus: number,
  body: unknown,
  parseSuccess: (body: unknown) => T | undefined,
): PartnerOutcome<T> {
  if (httpStatus >= 200 && httpStatus < 300) {
    const value = body === undefined ? undefined : parseSuccess(body);
    if (value !== undefined) return { kind: 'success', value, httpStatus };
    // "Come back later" in a 2xx shape (202, or a body that only carries a status such as "processing"):
    // the spec does not show that answer's shape. Not a card either way: the same request ID later.
    const pending = httpStatus === 202 || typeof (body as { status?: unknown } | undefined)?.status === 'string';
    return pending
      ? { kind: 'unknown', reason: 'in_progress', httpStatus, message: `${httpStatus} without a result from ${endpoint} (come back later)` }
      : { kind: 'unknown', reason: 'unparseable', httpStatus, message: `unexpected ${httpStatus} body from ${endpoint}` };
  }
  const envelope = envelopeSchema.safeParse(body);
  const first = envelope.success ? envelope.data.errors[0] : undefined;
  const code = first?.code;
  const message = first?.message || `HTTP ${httpStatus}`;

  if (httpStatus === 401 && (code === 'unauthorized' || code === 'invalid_signature')) {
    return { kind: 'credentials', code, message, httpStatus };
  }
  if (code !== undefined && DEFINITIVE[endpoint]?.includes(code as DefinitiveCode)) {
    const expectedStatus = code === 'gift_card_not_found' ? 404 : 422;
    if (httpStatus === expectedStatus) return { kind: 'definitive', code: code as DefinitiveCode, message, httpStatus };
  }
  if (endpoint === 'createPullRequest' && httpStatus === 422 && code === 'unprocessable_entity') {
    return { kind: 'request_id_used', message, httpStatus };
  }
  if (httpStatus === 404 && code !== undefined && NOT_FOUND[endpoint]?.includes(code)) {
    return { kind: 'not_found', code, message, httpStatus };
  }
  if (code === PULL_IN_PROGRESS_CODE) {
    return { kind: 'unknown', reason: 'in_progress', httpStatus, code, message };
  }
  if (httpStatus === 429) return { kind: 'unknown', reason: 'rate_limited', httpStatus, code, message };
  if (httpStatus >= 500) return { kind: 'unknown', reason: 'server_error', httpStatus, code, message };
  return { kind: 'unknown', reason: 'unexpected', httpStatus, code, message };
}
