/**
 * The fleet's partner limits as Redis scripts: every decision is one atomic script on Redis's own clock
 * (TIME), so processes on hosts whose clocks differ agree. Keys of one scope (a kind of call, or `any`):
 *   bucket  hash  tokens, ts (token bucket holding half a second of calls: the partner's own bucket, if it
 *                 holds a second, keeps half of it in reserve for the network's jitter), win, cnt, prev
 *                 (calls admitted per second)
 *   flight  zset  permit id -> expiry (a killed process's place frees itself once its call's lease is over)
 *   pause   string  until (ms): a Retry-After the partner asked for
 *   adapt   hash  rate, base, step, ts, cut: the adaptive rate after 429s without Retry-After (halved, then
 *                 raised by `step` per second until `base`, when it is dropped)
 *   r429    hash  minute -> 429s answered that minute
 * plus `want`, set while a creation is held back by the shared (`any`) limits: polls and re-checks yield
 * to it (unless urgent). All keys carry one hash tag, so a Redis Cluster keeps them in one slot.
 */

/** Shared by the scripts: now (ms, Redis's clock), the effective rate of a scope, the tokens of a bucket. */
const COMMON = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function effrate(adaptKey, configured)
  local a = redis.call('HMGET', adaptKey, 'rate', 'base', 'step', 'ts')
  if not a[1] then return configured end
  local r = tonumber(a[1]) + tonumber(a[3]) * (now - tonumber(a[4])) / 1000
  if r >= tonumber(a[2]) then
    redis.call('DEL', adaptKey)
    return configured
  end
  if configured > 0 and configured < r then return configured end
  return r
end

local function tokens(bucketKey, rate)
  local b = redis.call('HMGET', bucketKey, 'tokens', 'ts')
  local burst = math.max(1, rate / 2)
  local tok = tonumber(b[1]) or burst
  local ts = tonumber(b[2]) or now
  return math.min(burst, tok + math.max(0, now - ts) * rate / 1000)
end
`;

/**
 * KEYS: bucket, flight, pause, adapt of the kind; the same of `any`; want.
 * ARGV: permit id, lease ms, kind rate, kind in flight, any rate, any in flight (0: unlimited), kind, yields (1/0), want ttl ms.
 * Returns {1, 0, 'ok'} (the permit is in both flight sets) or {0, wait ms, reason}.
 */
export const ACQUIRE = `${COMMON}
local kind = ARGV[7]
local function pausedFor(key)
  local u = tonumber(redis.call('GET', key) or '0')
  if u > now then return u - now end
  return 0
end
local paused = math.max(pausedFor(KEYS[3]), pausedFor(KEYS[7]))
if paused > 0 then return {0, paused, 'paused'} end

if ARGV[8] == '1' then
  local w = redis.call('PTTL', KEYS[9])
  if w > 0 then return {0, math.min(w, 50), 'yield'} end
end

local function full(key, limit)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if limit <= 0 then return false end
  return redis.call('ZCARD', key) >= limit
end

-- scope: returns wait (0: free) and reason
local function check(bucket, flight, adapt, rateArg, flightArg)
  if full(flight, tonumber(flightArg)) then return 20, 'in_flight', 0, 0 end
  local rate = effrate(adapt, tonumber(rateArg))
  if rate <= 0 then return 0, 'ok', 0, 0 end
  local tok = tokens(bucket, rate)
  if tok < 1 then return math.max(1, math.ceil((1 - tok) * 1000 / rate)), 'rate', rate, tok end
  return 0, 'ok', rate, tok
end

local aw, ar, arate, atok = check(KEYS[5], KEYS[6], KEYS[8], ARGV[5], ARGV[6])
local kw, kr, krate, ktok = check(KEYS[1], KEYS[2], KEYS[4], ARGV[3], ARGV[4])
if aw > 0 or kw > 0 then
  if aw > 0 and kind == 'create' then redis.call('SET', KEYS[9], '1', 'PX', ARGV[9]) end
  if aw >= kw then return {0, aw, ar} end
  return {0, kw, kr}
end

local function take(bucket, flight, rate, tok)
  if rate > 0 then redis.call('HSET', bucket, 'tokens', tostring(tok - 1), 'ts', now) end
  local sec = math.floor(now / 1000)
  local b = redis.call('HMGET', bucket, 'win', 'cnt')
  local win = tonumber(b[1]) or sec
  if win ~= sec then
    local prev = 0
    if win == sec - 1 then prev = tonumber(b[2]) or 0 end
    redis.call('HSET', bucket, 'win', sec, 'cnt', 1, 'prev', prev)
  else
    redis.call('HINCRBY', bucket, 'cnt', 1)
  end
  redis.call('PEXPIRE', bucket, 600000)
  redis.call('ZADD', flight, now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', flight, tonumber(ARGV[2]) + 60000)
end
take(KEYS[5], KEYS[6], arate, atok)
take(KEYS[1], KEYS[2], krate, ktok)
return {1, 0, 'ok'}
`;

/**
 * KEYS: bucket and flight of the kind, the same of `any`, r429 of the kind.
 * ARGV: permit id, give the token back (1/0), kind rate, any rate, counts as a 429 (1/0).
 */
export const RELEASE = `${COMMON}
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
if ARGV[2] == '1' then
  local function refund(bucket, rate)
    rate = tonumber(rate)
    if rate <= 0 or redis.call('EXISTS', bucket) == 0 then return end
    redis.call('HSET', bucket, 'tokens', tostring(math.min(math.max(1, rate / 2), tokens(bucket, rate) + 1)), 'ts', now)
  end
  refund(KEYS[1], ARGV[3])
  refund(KEYS[3], ARGV[4])
end
if ARGV[5] == '1' then
  redis.call('HINCRBY', KEYS[5], tostring(math.floor(now / 60000)), 1)
  redis.call('PEXPIRE', KEYS[5], 3660000)
end
return 1
`;

/** KEYS: pause of the kind, pause of any. Returns the ms either still lasts (0: none). */
export const PAUSED = `${COMMON}
local longest = 0
for i = 1, 2 do
  local u = tonumber(redis.call('GET', KEYS[i]) or '0')
  if u - now > longest then longest = u - now end
end
return longest
`;

/** KEYS: pause of the kind. ARGV: ms. Returns {1 if this call started or lengthened the pause, until}. */
export const PAUSE = `${COMMON}
local untilMs = now + tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if untilMs <= current then return {0, current} end
redis.call('SET', KEYS[1], untilMs, 'PX', tonumber(ARGV[1]) + 1000)
return {current <= now and 1 or 2, untilMs}
`;

/**
 * A 429 without Retry-After: halve the kind's rate (the configured one, the adaptive one, or without
 * either the rate admitted in the last second), never below the floor; at most once a second.
 * KEYS: adapt, bucket of the kind. ARGV: configured rate, floor. Returns {1 if cut, new rate}.
 */
export const CUT = `${COMMON}
local configured = tonumber(ARGV[1])
local floor = tonumber(ARGV[2])
local last = tonumber(redis.call('HGET', KEYS[1], 'cut') or '0')
if now - last < 1000 then return {0, tostring(effrate(KEYS[1], configured))} end
local current = effrate(KEYS[1], configured)
if current <= 0 then
  local b = redis.call('HMGET', KEYS[2], 'cnt', 'prev')
  current = math.max(tonumber(b[1]) or 0, tonumber(b[2]) or 0, floor)
end
local base = configured
if base <= 0 then base = math.max(current * 2, floor * 2) end
local rate = math.max(floor, current / 2)
local step = math.max(0.1, base / 20)
redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'base', tostring(base), 'step', tostring(step), 'ts', now, 'cut', now)
redis.call('PEXPIRE', KEYS[1], 600000)
return {1, tostring(rate)}
`;

/**
 * What the operations page shows of a scope. KEYS: bucket, flight, pause, adapt, r429. ARGV: configured rate.
 * Returns {effective rate, in flight, paused until (0: not), 429s in the last hour, admitted last second, adaptive (1/0)}.
 */
export const SNAPSHOT = `${COMMON}
local configured = tonumber(ARGV[1])
local adaptive = redis.call('EXISTS', KEYS[4])
local rate = effrate(KEYS[4], configured)
local inflight = redis.call('ZCOUNT', KEYS[2], now, '+inf')
local untilMs = tonumber(redis.call('GET', KEYS[3]) or '0')
if untilMs <= now then untilMs = 0 end
local minute = math.floor(now / 60000)
local total = 0
local h = redis.call('HGETALL', KEYS[5])
for i = 1, #h, 2 do
  local m = tonumber(h[i])
  if m > minute - 60 then total = total + tonumber(h[i + 1]) else redis.call('HDEL', KEYS[5], h[i]) end
end
local b = redis.call('HMGET', KEYS[1], 'win', 'cnt', 'prev')
local last = 0
local sec = math.floor(now / 1000)
if tonumber(b[1]) == sec then last = tonumber(b[3]) or 0 elseif tonumber(b[1]) == sec - 1 then last = tonumber(b[2]) or 0 end
return {tostring(rate), inflight, untilMs, total, last, adaptive}
`;
