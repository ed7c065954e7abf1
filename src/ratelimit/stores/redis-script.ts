/**
 * Check-then-consume over all the counters of one request, as one Lua script so no
 * other client can run between the check and the increments (Redis runs a script
 * to completion). A request that does not fit every counter changes none of them.
 *
 *   KEYS[i]           one hash per counter: c = count, r = window end (ms)
 *   ARGV[1]           now (ms), from the caller's clock so tests can inject time
 *   ARGV[2i], [2i+1]  limit and window length (ms) of KEYS[i]
 *
 * Returns { allowed (1|0), count_1, reset_1, count_2, reset_2, ... } where a count
 * includes this request when it was allowed.
 *
 * The key also expires on its own (PEXPIRE, by Redis's clock) once its window is
 * over, so idle identities cost nothing. Window ends are compared with the caller's
 * clock; nodes should keep their clocks in sync (NTP), and a skew of s ms moves a
 * window's end by at most s ms.
 */
export const HIT_SCRIPT = `
local now = tonumber(ARGV[1])
local n = #KEYS
local counts, resets, fresh = {}, {}, {}
local allowed = 1
for i = 1, n do
  local limit = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  local state = redis.call('HMGET', KEYS[i], 'c', 'r')
  local c, r = tonumber(state[1]), tonumber(state[2])
  if c == nil or r == nil or r <= now then
    c, r, fresh[i] = 0, now + window, true
  end
  counts[i], resets[i] = c, r
  if c >= limit then allowed = 0 end
end
if allowed == 1 then
  for i = 1, n do
    counts[i] = counts[i] + 1
    if fresh[i] then
      redis.call('HSET', KEYS[i], 'c', 1, 'r', resets[i])
      redis.call('PEXPIRE', KEYS[i], resets[i] - now)
    else
      redis.call('HINCRBY', KEYS[i], 'c', 1)
    end
  end
end
local out = { allowed }
for i = 1, n do
  out[2 * i] = counts[i]
  out[2 * i + 1] = resets[i]
end
return out
`;
