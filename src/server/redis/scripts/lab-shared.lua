-- What the store's script shares with the lab's (lab.lua): whether an
-- address has rules, and the SMTP attempt log's keys and writes. The store's
-- script looks for rules and logs the accepted attempts of the mail it
-- stores in the same run as the delivery (one round trip at the end of DATA
-- for mail to addresses without rules); the lab's writes every other attempt.
-- Included where a script says `-- include: lab-shared.lua` (lua-scripts.ts),
-- after its own `P` (the prefix), `now`, `retention` and `ttl`.
--
-- Keys, under the store's prefix P:
--   P:lab:r:<mailbox>  string: the address's rules (lab.lua), from its first rule until they are cleared or expire
--   P:lab:l:<mailbox>  list: the address's attempts, "seq entry" (attempt-entry.ts), oldest first. A list, not
--                      a sorted set: entries are longer than Redis keeps in a compact sorted set, and the skiplist
--                      it takes instead cost about 1 KB per address (bench/store-bytes.ts)
--   P:lab:attempts     sorted set: every attempt, "seq mailbox", scored by its time: retention and the cap on the whole log
--   P:lab:seq          the counter that makes members unique and orders the log (the lab's other members too)

local function labRulesOf(a) return P .. ':lab:r:' .. a end
local LAB_LOG = P .. ':lab:attempts'
local LAB_SEQ = P .. ':lab:seq'
local function labLogOf(a) return P .. ':lab:l:' .. a end

-- Removes entry number seq from mailbox a's log: its first, unless another
-- server's clock put a later entry first in the whole log's order.
local function dropEntry(a, seq)
  local key = labLogOf(a)
  local prefix = seq .. ' '
  local first = redis.call('LINDEX', key, 0)
  if first and string.sub(first, 1, #prefix) == prefix then
    redis.call('LPOP', key)
    return
  end
  for _, m in ipairs(redis.call('LRANGE', key, 0, -1)) do
    if string.sub(m, 1, #prefix) == prefix then
      redis.call('LREM', key, 1, m)
      return
    end
  end
end

-- Drops attempts older than the retention and past the cap on the whole log, oldest first; at most 1000 per call.
local function sweepLog(maxAll)
  local cutoff = now - retention
  for i = 1, 1000 do
    local oldest = redis.call('ZRANGE', LAB_LOG, 0, 0, 'WITHSCORES')
    if #oldest == 0 then return end
    if tonumber(oldest[2]) > cutoff and redis.call('ZCARD', LAB_LOG) <= maxAll then return end
    redis.call('ZREM', LAB_LOG, oldest[1])
    local seq, a = string.match(oldest[1], '^(%d+) (.*)$')
    dropEntry(a, seq)
  end
end

-- Logs one attempt for mailbox a (at: its time, json: the attempt) within the caps; answers its seq.
local function logAttempt(a, at, json, maxPerAddress, maxAll)
  local key = labLogOf(a)
  local seq = redis.call('INCR', LAB_SEQ)
  redis.call('RPUSH', key, seq .. ' ' .. json)
  redis.call('ZADD', LAB_LOG, at, seq .. ' ' .. a)
  redis.call('PEXPIRE', key, ttl)
  redis.call('PEXPIRE', LAB_LOG, ttl)
  local over = redis.call('LLEN', key) - maxPerAddress
  if over > 0 then
    for _, m in ipairs(redis.call('LRANGE', key, 0, over - 1)) do
      redis.call('ZREM', LAB_LOG, string.match(m, '^%d+') .. ' ' .. a)
    end
    redis.call('LTRIM', key, over, -1)
  end
  sweepLog(maxAll)
  return seq
end
