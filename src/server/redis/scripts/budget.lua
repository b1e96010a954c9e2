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
redis.call('PEXPIRE', key, math.ceil(window) + 1000)
return {1}
