import { HttpException } from '@nestjs/common';

/** HTTP status -> the envelope's `status` text (the partner's style: not_found, unprocessable_entity, ...). */
export const STATUS_TEXT: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable_entity',
  429: 'too_many_requests',
  500: 'internal_server_error',
  503: 'service_unavailable',
};

export interface ErrorBody {
  errors: { code: string; message: string }[];
  status: string;
}

export const envelope = (httpStatus: number, code: string, message: string): ErrorBody => ({
  errors: [{ code, message }],
  status: STATUS_TEXT[httpStatus] ?? `http_${httpStatus}`,
});

/**
 * An error answered with the envelope `{ errors: [{ code, message }], status }`; with `retryAfterS`, also a
 * `Retry-After` header (seconds): the caller may try again then (a 503 that is not its fault).
 */
export class ApiError extends HttpException {
  constructor(
    httpStatus: number,
    readonly code: string,
    message: string,
    readonly retryAfterS?: number,
  ) {
    super(envelope(httpStatus, code, message), httpStatus);
    // HttpException would name the class here (the envelope has no top-level message): keep the words.
    this.message = message;
  }
}
