/**
 * Invariant 7 (secrets stay secret): pino redaction paths. Logs are written so that secrets are never
 * passed to the logger in the first place; these paths are the safety net for the places where an
 * object carrying one could still end up in a log line (request headers, a card, a partner answer).
 */
export const REDACTED = '[redacted]';

const secretKeys = [
  'authorization',
  'signature',
  'sharedKey',
  'shared_key',
  'sharedKeyHex',
  'apiKey',
  'api_key',
  'pin_code',
  'pinCode',
  'password',
  'secret',
];

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  // A card object anywhere at depth <= 3: its code and PIN.
  'card.code',
  'card.pin_code',
  '*.card.code',
  '*.card.pin_code',
  '*.*.card.code',
  '*.*.card.pin_code',
  'cards[*].code',
  'cards[*].pin_code',
  ...secretKeys,
  ...secretKeys.map((k) => `*.${k}`),
  ...secretKeys.map((k) => `*.*.${k}`),
];
