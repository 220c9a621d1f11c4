import { STATUS_CODES } from 'node:http';
import type { ErrorEnvelope } from '@cardpull/partner-client';
import type { SimAnswer } from './answer';

/**
 * `status` of the envelope names the HTTP class. The spec shows not_found, unprocessable_entity and
 * unauthorized; for the statuses it does not show we use the same snake_case naming.
 */
const STATUS_NAMES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable_entity',
  500: 'internal_server_error',
  503: 'service_unavailable',
};

export function statusName(httpStatus: number): string {
  return (
    STATUS_NAMES[httpStatus] ??
    (STATUS_CODES[httpStatus] ?? 'error')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_|_$/g, '')
  );
}

export function envelope(httpStatus: number, code: string, message: string): ErrorEnvelope {
  return { errors: [{ code, message }], status: statusName(httpStatus) };
}

/** An answer of the partner's error table (or one of our additions), thrown or returned by the handlers. */
export class PartnerError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'PartnerError';
  }

  toAnswer(): SimAnswer {
    return { status: this.httpStatus, body: envelope(this.httpStatus, this.code, this.message), headers: this.headers };
  }

  static badRequest(message: string): PartnerError {
    return new PartnerError(400, 'bad_request', message);
  }

  static giftCardNotFound(code: unknown): PartnerError {
    return typeof code === 'string' && code !== ''
      ? new PartnerError(404, 'gift_card_not_found', `Gift card ${code} not found`)
      : new PartnerError(404, 'gift_card_not_found', 'Gift card not found: gift_card_code is missing');
  }
}
