/**
 * The fleet's partner limits as Redis scripts: every decision is one atomic script on Redis's own clock
 * (TIME), so processes on hosts whose clocks differ agree. Keys of one scope (a kind of call, or `any`):
 *   bucket  hash  tokens, ts (token bucket holding half a second of calls: the partner's own bucket, if it
 *                 holds a second, keeps half of it in reserve for the network's jitter), win, cnt, prev
 *                 (calls admitted per second), all (calls admitted in all)
 *   flight  zset  permit id -> expiry (a killed process's place frees itself once its call's lease is over)
 *   pause   string  until (ms): a Retry-After the partner asked for
 *   adapt   hash  rate, ts, fast, slow, ceil, cut, seeded (the gates whose count seeded a first rate),
 *                 rwin, rcnt, rprev (429s per second), rall (429s in
 *                 all), cts, call, c429 (the last cut's time, and `all` and `rall` then), pend (the last
 *                 pause's end): the rate learned
 *                 from 429s (see LEARN): `rate` at `ts`,
 *                 raised by `fast` per second up to KNEE x `ceil` (the partner's rate as the last 429 showed
 *                 it), then by `slow`; ceil -1: none known yet, doubled every second (a slow start); ceil 0:
 *                 a configured rate's recovery, `fast` per second until back at it, when the hash is dropped
 *   r429    hash  minute -> 429s answered that minute
 * plus `want`, set while a creation is held back by the shared (`any`) limits: polls and re-checks yield
 * to it (unless urgent). All keys carry one hash tag, so a Redis Cluster keeps them in one slot.
 */

/**
 * A learned rate climbs fast back to this share of the rate at which the partner last answered 429, then
 * slowly past it (a probe): the partner's own bucket absorbs the small excess for many seconds, so the
 * next 429 comes rarely, and each one costs a cut of a tenth (see LEARN).
 */
export const KNEE = 0.97;
/**
 * The learned rate after a 429 when the last second cannot tell the partner's rate (a pause in it: with
 * Retry-After, the partner's bucket refills while we wait, and hides its rate): this share of the rate in
 * force when it came (a configured rate is halved instead).
 */
export const LEARNED_CUT = 0.75;
/** ... and the ceiling it climbs back towards then: this share of that rate (which proved too high). */
export const LEARNED_CEIL = 0.85;
/** After a 429, a learned rate goes to this share of what the partner let through in the last second. */
export const THROUGH_SHARE = 0.95;
/**
 * When a pause was in the last second (a Retry-After), the partner's rate is what it let through since the
 * last cut, if that was at least this long ago: it refused a call then and refuses one now, so its bucket
 * was empty at both ends, and the pause (no longer than its bucket holds) wasted none of its tokens. Not
 * used without a pause: a fleet that sent less than the partner would take for a while (its bucket full,
 * tokens lost) would read a rate too low. With Retry-After the one-second
 * view overstated the rate (the bucket refills during each pause): the learned rate stayed a third above
 * the partner's and the pauses did the limiting.
 */
export const CYCLE_MIN_MS = 1_500;
/**
 * A learned rate's last whole second tells the partner's rate only if the fleet sent at least this share of
 * the rate in force then (its gate's bucket lets it send up to 1.5 times the rate in a second).
 */
export const STEADY_SHARE = 0.75;
/**
 * Above the knee a learned rate rises by this share of its ceiling per second, and faster the longer no
 * 429 came (u seconds past the knee: slow x u x (1 + u / PROBE_GROWTH_S)), so a ceiling learned too low
 * (a second in which the fleet sent too little to show the partner's rate) is left behind within seconds
 * (from 0.7 of the partner's rate back to it in about 8 s), while one close to the partner's rate costs a
 * 429 only every several seconds (its bucket absorbs the excess meanwhile). Measured with
 * `BENCH_LIMITS_PARTS=learned npm run bench -- limits`: at 1/100 and 10 s, 3 workers against 50/s without
 * Retry-After took 17 s to climb from 33/s and delivered 0.81 of the limit.
 */
export const PROBE_SHARE_PER_SECOND = 1 / 50;
export const PROBE_GROWTH_S = 5;

/** Shared by the scripts: now (ms, Redis's clock), the effective rate of a scope, the tokens of a bucket. */
const COMMON = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function effrate(adaptKey, configured)
  local a = redis.call('HMGET', adaptKey, 'rate', 'ts', 'fast', 'slow', 'ceil')
  if not a[1] then return configured end
  local rate, fast, slow, ceil = tonumber(a[1]), tonumber(a[3]), tonumber(a[4]) or 0, tonumber(a[5]) or 0
  local dt = math.max(0, now - tonumber(a[2])) / 1000
  local r
  local knee = ceil * ${KNEE}
  if ceil < 0 then
    r = rate * 2 ^ math.min(dt, 20)
  elseif ceil == 0 then
    r = rate + fast * dt
  elseif rate >= knee then
    r = rate + slow * dt * (1 + dt / ${PROBE_GROWTH_S})
  else
    local t1 = (knee - rate) / fast
    if dt <= t1 then r = rate + fast * dt else
      local u = dt - t1
      r = knee + slow * u * (1 + u / ${PROBE_GROWTH_S})
    end
  end
  if configured > 0 and r >= configured then
    redis.call('DEL', adaptKey)
    return configured
  end
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
 * ARGV: permit id, lease ms, kind rate, kind in flight, any rate, any in flight (0: unlimited), kind, yields (1/0), want ttl ms,
 * track in flight (1/0: only where an in-flight limit is set does a permit take a place, and give it back).
 * Returns {1, now, 'ok'} (the permit is in both flight sets if tracked; now: Redis's clock) or {0, wait ms, reason}.
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
  local win = tonumber(b[1])
  if win ~= sec then
    local prev = 0
    if win == sec - 1 then prev = tonumber(b[2]) or 0 end
    redis.call('HSET', bucket, 'win', sec, 'cnt', 1, 'prev', prev)
  else
    redis.call('HINCRBY', bucket, 'cnt', 1)
  end
  redis.call('HINCRBY', bucket, 'all', 1)
  redis.call('PEXPIRE', bucket, 600000)
  if ARGV[10] == '1' then
    redis.call('ZADD', flight, now + tonumber(ARGV[2]), ARGV[1])
    redis.call('PEXPIRE', flight, tonumber(ARGV[2]) + 60000)
  end
end
take(KEYS[5], KEYS[6], arate, atok)
take(KEYS[1], KEYS[2], krate, ktok)
return {1, now, 'ok'}
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

/**
 * The partner answered a call of the kind 429 (or 503 with Retry-After): what the fleet learns from it.
 *  - Retry-After: the kind is paused until then, and the release after the pause is paced (the bucket is
 *    empty at its end and fills at the rate in force), not a burst from every worker;
 *  - the rate (at most one cut a second, and none for a call admitted before the last cut: it was sent at
 *    the old rate): a configured rate is halved on a 429 without Retry-After (with one, the pause is
 *    the answer), never below the floor, and recovers linearly to itself;
 *    without one, the first 429 starts at half of `seed` (what this process got through in the last
 *    second, which may include the partner's whole bucket; every other process refused within that
 *    second adds half of its own, once: before that 429 no process asks Redis, so none knows the
 *    fleet's count), doubled every second until the next 429
 *    (not while paused); from then on
 *    each 429 takes the rate to THROUGH_SHARE of what the partner let through in the last whole second
 *    (calls admitted here less their 429s: refusing, its bucket was empty, so that is its rate), or, when
 *    that second says too much because a pause was in it or came since the last cut (the partner's bucket
 *    filled while nothing was sent, and drains for as long as the fleet sends faster than its rate: with
 *    Retry-After and 3 workers the fleet had learned 68-69/s of a partner at 50/s, and the pauses did the
 *    limiting), or too little because the fleet stood still in it (sent less than STEADY_SHARE of its
 *    rate: the 429 came from the burst after a stall), to THROUGH_SHARE of what the partner let through
 *    since the last cut (CYCLE_MIN_MS), or else cuts the rate in force to LEARNED_CUT (its ceiling then
 *    LEARNED_CEIL of it); never by more than half
 *    at once; either is remembered as the ceiling
 *    the rate climbs back towards (see effrate), but a measure under half of the rate in force leaves
 *    LEARNED_CEIL of that rate as the ceiling (from so low a ceiling the slow probe took 12 s back).
 * KEYS: adapt, bucket, pause, r429 of the kind. ARGV: configured rate, floor, Retry-After ms (0: none),
 * the permit's admission (Redis ms; 0: admitted without asking Redis), seed, channel, kind, learned ttl ms,
 * counts as a 429 (1/0), the gate's id (a process's seed counts once).
 * Returns {pause (0: none, 1: started, 2: lengthened), pause until, cut (1/0), rate in force}; publishes the
 * kind on the channel when it started a pause or cut the rate (every gate then asks Redis for that kind).
 */
export const LEARN = `${COMMON}
local configured = tonumber(ARGV[1])
local floor = tonumber(ARGV[2])
local ra = tonumber(ARGV[3])
local admitted = tonumber(ARGV[4])
local ttl = tonumber(ARGV[8])
local gid = ARGV[10] or ''
if ARGV[9] == '1' then
  redis.call('HINCRBY', KEYS[4], tostring(math.floor(now / 60000)), 1)
  redis.call('PEXPIRE', KEYS[4], 3660000)
end
local paused, untilMs, pauseEnd = 0, 0, 0
if ra > 0 then
  untilMs = now + ra
  local current = tonumber(redis.call('GET', KEYS[3]) or '0')
  if untilMs > current then
    redis.call('SET', KEYS[3], untilMs, 'PX', ra + 1000)
    if current <= now then paused = 1 else paused = 2 end
    redis.call('HSET', KEYS[2], 'tokens', '0', 'ts', untilMs)
    redis.call('PEXPIRE', KEYS[2], 600000)
    pauseEnd = untilMs
  else
    untilMs = current
  end
end
local last = tonumber(redis.call('HGET', KEYS[1], 'cut') or '0')
local exists = redis.call('EXISTS', KEYS[1]) == 1
local cut = 0
if now - last >= 1000 and admitted >= last and not (configured > 0 and ra > 0) then
  cut = 1
  if configured > 0 then
    local current = effrate(KEYS[1], configured)
    redis.call('HSET', KEYS[1], 'rate', tostring(math.max(floor, current / 2)), 'ts', now, 'fast', tostring(math.max(0.1, configured / 20)), 'slow', '0', 'ceil', '0', 'cut', now)
  elseif not exists then
    -- Half of what this process got through: that second may hold the partner's whole bucket besides its rate.
    -- The other processes add theirs as their own 429s come (below): the fleet's count, not one process's.
    local seed = math.max(floor, tonumber(ARGV[5]) / 2)
    redis.call('HSET', KEYS[1], 'rate', tostring(seed), 'ts', now, 'fast', '0', 'slow', '0', 'ceil', '-1', 'cut', now, 'seeded', ',' .. gid .. ',')
  else
    -- What the partner let through in the last whole second: the calls admitted here then, less its 429s.
    -- Refusing some, its bucket was empty: that is its rate. Not trusted when a pause was in that second.
    local sec = math.floor(now / 1000)
    local function lastWhole(win, cnt, prev)
      win = tonumber(win)
      if win == sec then return tonumber(prev) or 0 elseif win == sec - 1 then return tonumber(cnt) or 0 end
      return 0
    end
    local b = redis.call('HMGET', KEYS[2], 'win', 'cnt', 'prev', 'all')
    local r = redis.call('HMGET', KEYS[1], 'rwin', 'rcnt', 'rprev', 'cts', 'call', 'c429', 'rall')
    local through = lastWhole(b[1], b[2], b[3]) - lastWhole(r[1], r[2], r[3])
    -- What the partner let through since the last cut: its bucket was empty then (it refused a call) and
    -- is empty now, so whatever it admitted in between, pauses and all, came at its rate.
    local cycle = 0
    local cts = tonumber(r[4])
    if cts and now - cts >= ${CYCLE_MIN_MS} then
      local passed = (tonumber(b[4]) or 0) - (tonumber(r[5]) or 0) - ((tonumber(r[7]) or 0) - (tonumber(r[6]) or 0))
      if passed > 0 then cycle = passed * 1000 / (now - cts) end
    end
    local current = effrate(KEYS[1], 0)
    local ceil, rate = current * ${LEARNED_CEIL}, current * ${LEARNED_CUT}
    -- A pause since the last cut let the partner's bucket fill: what it let through in a second after it
    -- holds that bucket besides its rate, for as long as the fleet sends faster than the rate (seconds,
    -- not one). From empty (the last cut's 429) to empty (this one), the cycle tells the rate, pauses and all.
    local pend = tonumber(redis.call('HGET', KEYS[1], 'pend') or '0')
    local filled = pend > (sec - 1) * 1000 or (cts ~= nil and pend > cts)
    -- A second in which the fleet sent much less than its rate allowed (a process stood still: a stall, a
    -- long GC) says nothing of the partner's rate: the 429 came from the burst after it (a run at 50/s, 1
    -- worker, cut to 28/s that way and delivered 0.72 of the limit). The cycle says it then. (Not in the
    -- slow start, whose last second was sent at half of the rate it ends at.)
    local probing = (tonumber(redis.call('HGET', KEYS[1], 'ceil')) or 0) > 0
    local stood = probing and lastWhole(b[1], b[2], b[3]) < current * ${STEADY_SHARE}
    if through > 0 and through < current and not filled and not stood then ceil, rate = through, through * ${THROUGH_SHARE}
    elseif cycle > 0 and cycle < current and (filled or stood) then ceil, rate = cycle, cycle * ${THROUGH_SHARE} end
    -- Never more than half at once: a second that says too little (calls slow to come) costs a second more.
    -- Nor is such a measure the ceiling to climb back towards (the slow probe from there took 12 s from 28
    -- to 50/s): the multiplicative decrease's is (LEARNED_CEIL of the rate in force), reached in seconds.
    if rate < current / 2 then ceil = math.max(ceil, current * ${LEARNED_CEIL}) end
    redis.call('HSET', KEYS[1], 'rate', tostring(math.max(floor, current / 2, rate)), 'ts', now,
      'fast', tostring(math.max(1, ceil / 5)), 'slow', tostring(math.max(0.05, ceil * ${PROBE_SHARE_PER_SECOND})), 'ceil', tostring(ceil), 'cut', now)
  end
end
if cut == 0 and configured <= 0 and exists and now - last < 1000 then
  -- The fleet's first 429 came less than a second ago: every process refused then adds half of what it got
  -- through (once), so the slow start begins from the fleet's count, not from the first process's share.
  local a = redis.call('HMGET', KEYS[1], 'ceil', 'seeded')
  local mark = ',' .. gid .. ','
  if tonumber(a[1]) == -1 and a[2] and not string.find(a[2], mark, 1, true) then
    redis.call('HSET', KEYS[1], 'rate', tostring(effrate(KEYS[1], 0) + tonumber(ARGV[5]) / 2), 'ts', now, 'seeded', a[2] .. gid .. ',')
  end
end
if pauseEnd > 0 and configured <= 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  -- The learned rate does not climb while nothing may be sent: it resumes from the pause's end.
  redis.call('HSET', KEYS[1], 'rate', tostring(effrate(KEYS[1], configured)), 'ts', pauseEnd, 'pend', pauseEnd)
end
if ARGV[9] == '1' and admitted > 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  local sec = math.floor(now / 1000)
  local r = redis.call('HMGET', KEYS[1], 'rwin', 'rcnt')
  local win = tonumber(r[1])
  if win ~= sec then
    local prev = 0
    if win == sec - 1 then prev = tonumber(r[2]) or 0 end
    redis.call('HSET', KEYS[1], 'rwin', sec, 'rcnt', 1, 'rprev', prev)
  else
    redis.call('HINCRBY', KEYS[1], 'rcnt', 1)
  end
  redis.call('HINCRBY', KEYS[1], 'rall', 1)
end
if cut == 1 and configured <= 0 then
  redis.call('HSET', KEYS[1], 'cts', now, 'call', redis.call('HGET', KEYS[2], 'all') or '0', 'c429', redis.call('HGET', KEYS[1], 'rall') or '0')
end
if redis.call('EXISTS', KEYS[1]) == 1 and configured <= 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
if configured > 0 and cut == 1 then redis.call('PEXPIRE', KEYS[1], 600000) end
if paused > 0 or cut == 1 then redis.call('PUBLISH', ARGV[6], ARGV[7]) end
return {paused, untilMs, cut, tostring(effrate(KEYS[1], configured))}
`;

/**
 * Which kinds have a learned rate or a pause, for a gate that missed a message (or just started).
 * KEYS: adapt and pause of create, poll, read (in that order). Returns for each kind the ms its learned
 * state still lasts (0: none).
 */
export const LEARNED = `${COMMON}
local out = {}
for i = 1, #KEYS, 2 do
  local a = redis.call('PTTL', KEYS[i])
  local p = tonumber(redis.call('GET', KEYS[i + 1]) or '0') - now
  out[#out + 1] = math.max(a, p, 0)
end
return out
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
