/**
 * The partner's resources, as the spec names them (docs/PARTNER-API.md, "The resources"). Amounts are integers
 * in the currency's minor unit (the pull request's `amount_cents` says so); the balance is a decimal in
 * currency units.
 */

export type FacialValues =
  | { type: 'fixed'; amounts: number[] }
  | { type: 'free'; min_amount: number; max_amount: number; step_amount: number };

export interface GiftCard {
  name: string;
  code: string;
  brand: string;
  barcode_symbology: string;
  online_usable: boolean;
  offline_usable: boolean;
  /** Unit not shown by the spec; passed through as received. */
  validity_period: number;
  cumulative_online: boolean;
  /** Meaning of -1 and 0 not shown by the spec; passed through as received. */
  cumulative_online_limit: number;
  cumulative_offline: boolean;
  cumulative_offline_limit: number;
  splittable_online: boolean;
  splittable_offline: boolean;
  code_pin: boolean;
  how_to_use_online: string | null;
  how_to_use_offline: string | null;
  term_of_use: string;
  discount: number;
  next_discounts: { value: number; date: string }[];
  facial_values: FacialValues;
  logo_url: string;
  logo_square_url: string;
  country_name: string | null;
  country_code: string | null;
  /** Present only for regional gift cards. */
  countries?: { country_name: string; country_code: string }[];
}

export interface Card {
  id: string;
  code: string;
  expire_at: string;
  /** The spec lists pin_code as a string; a gift card without PIN (code_pin false) may send null or omit it. */
  pin_code?: string | null;
  amount: number;
  gift_card_code: string;
  pdf_url: string;
}

export type PullRequestStatus = 'waiting' | 'processing' | 'success' | 'error';

export interface PullRequest {
  id: string;
  /** Statuses beyond the four documented ones are "not shown": keep the raw text. */
  status: PullRequestStatus | (string & {});
  request_id: string;
  amount_cents?: number;
  created_at: string;
  updated_at: string;
  card: Card | null;
}

export interface Inventory {
  inventories: {
    gift_card: { code: string; name: string };
    end_to_end_api: {
      enabled: boolean;
      /** "unlimited", or (not shown by the spec) another text; the simulator sends an amount as text. */
      available_amount: string;
    };
    stocks: { facial_value: number; owned_quantity: number; shared_quantity: number }[];
  };
}

export interface Balance {
  balance: { amount: number };
}

/** The partner's error envelope. */
export interface ErrorEnvelope {
  errors: { code: string; message: string }[];
  status: string;
}

/** Error codes of the spec's table. */
export const PARTNER_ERROR_CODES = [
  'gift_card_not_found',
  'not_enough_funds',
  'out_of_stock',
  'invalid_amount',
  'unprocessable_entity',
  'unauthorized',
  'invalid_signature',
  'card_not_found',
  'pull_request_not_found',
] as const;
export type PartnerErrorCode = (typeof PARTNER_ERROR_CODES)[number];

/**
 * "Come back later" answer to a repeated POST /cards whose first pull is still running. The spec does not
 * show its shape; the simulator answers 409 with this code and a Retry-After header. The client does not
 * depend on it: any answer it does not recognise is an unknown outcome, retried with the same request ID.
 */
export const PULL_IN_PROGRESS_CODE = 'pull_in_progress';
