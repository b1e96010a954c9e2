-- The per-address budget as a sliding log in a Redis list (budgets/budget.ts
-- explains the rule): KEYS[1] the log, ARGV now, capacity, windowMs, and
-- `take` or `record`. `take` answers {1} when allowed, else {0, waitMs, sinceLastMs}.

local key = KEYS[1]
local now = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local n = redis.call('LLEN', key)
if ARGV[4] == 'take' and n >= capacity then
  local oldest = tonumber(redis.call('LINDEX', key, 0))
  local wait = oldest + window - now
  if wait > 0 then
    return {0, tostring(wait), tostring(now - tonumber(redis.call('LINDEX', key, -1)))}
  end
  redis.call('LPOP', key)
end
redis.call('RPUSH', key, ARGV[1])
while redis.call('LLEN', key) > capacity do redis.call('LPOP', key) end
-- The expiry only clears the logs of addresses gone quiet. It runs on Redis's
-- own clock, while `now` is the server's, which tests inject: a log must not
-- vanish while its window is still open on the server's clock because the
-- server's process stalled (in a loaded test run a server stalled past the
-- old window + 1 s between two calls of one address, and got its spent
-- budget back whole). So it is a minute past the window, not a second.
redis.call('PEXPIRE', key, math.ceil(window) + 60000)
return {1}
