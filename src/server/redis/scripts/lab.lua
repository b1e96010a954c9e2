-- The Redis lab's one Lua script (redis-lab.ts): the SMTP deferral lab's
-- rules, what they remember and the attempt log, changed inside Redis,
-- atomic and in one round trip, so two servers taking SMTP for one address
-- at the same moment count one throttle window and one greylist memory.
--
-- Keys, under the store's prefix P:
--   P:lab:r:<mailbox>  string: the address's rules as JSON {rules: [RuleRecord…], next: n}, in the order they act
--   P:lab:g:<mailbox>  hash: greylisted triple (tripleKey) -> "firstSeenAt passedAt order" ('-' for not passed yet)
--   P:lab:t:<mailbox>  sorted set: the recipients accepted at RCPT (what throttles count), scored by time
--   and the attempt log's (lab-shared.lua, included below; the store's
--   script writes it too, for the attempts of the mail it stores)
--
-- The rules here mirror rules/rule-book.ts, greylist.ts and throttle.ts (the
-- memory lab): the same order, the same spending, the same windows; both
-- answer to one contract suite (test/server/smtp-rules.test.ts) and to a
-- test that runs them side by side on random operations
-- (test/server/lab-store.test.ts). What a decision says in words is made
-- in TypeScript from the verdict returned here (rule-book.ts decisionOf).
--
-- Times come from the server's clock (ARGV now), as in the store's script.
-- Every key also carries a Redis expiry of the retention plus a margin,
-- renewed when the address's rules act or change: rules nobody set, used or
-- sent mail to for that long are forgotten, as the mail is.

local P = ARGV[1]
local op = ARGV[2]
local now = tonumber(ARGV[3])
local retention = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local L = P .. ':lab:'
-- include: lab-shared.lua

local R = labRulesOf
local function G(a) return L .. 'g:' .. a end
local function T(a) return L .. 't:' .. a end
local function num(x) return string.format('%.17g', x) end

local function load(a)
  local raw = redis.call('GET', R(a))
  if not raw then return nil end
  return cjson.decode(raw)
end

local function save(a, state)
  redis.call('SET', R(a), cjson.encode(state), 'PX', ttl)
end

-- remaining is a count, or null (cjson.null): until cleared
local function acts(rule, stage)
  return rule.stage == stage and rule.remaining ~= 0
end

local function spend(rule)
  if rule.remaining ~= cjson.null then rule.remaining = rule.remaining - 1 end
end

-- the longest hold of the address's slow rules at this stage, spending them
local function hold(state, stage)
  local delay, changed = 0, false
  for _, rule in ipairs(state.rules) do
    if rule.kind == 'slow' and acts(rule, stage) then
      if rule.delayMs > delay then delay = rule.delayMs end
      spend(rule)
      changed = true
    end
  end
  return delay, changed
end

-- greylist.ts: answers nil to pass, else the verdict's reason, retry and restarted
local function greylist(a, rule, key, maxTriples)
  local g = G(a)
  local seen = redis.call('HGET', g, key)
  if not seen then
    if redis.call('HLEN', g) >= maxTriples then
      -- the earliest remembered goes first
      local all = redis.call('HGETALL', g)
      local oldestKey, oldestOrder
      for i = 1, #all, 2 do
        local order = tonumber(string.match(all[i + 1], '(%d+)$'))
        if not oldestOrder or order < oldestOrder then oldestKey, oldestOrder = all[i], order end
      end
      redis.call('HDEL', g, oldestKey)
    end
    redis.call('HSET', g, key, ARGV[3] .. ' - ' .. redis.call('INCR', LAB_SEQ))
    redis.call('PEXPIRE', g, ttl)
    return {'first', num(rule.minDelayMs), '0'}
  end
  local first, passed, order = string.match(seen, '^(%S+) (%S+) (%S+)$')
  if passed ~= '-' then return nil end
  local waited = now - tonumber(first)
  if waited >= rule.minDelayMs then
    redis.call('HSET', g, key, first .. ' ' .. ARGV[3] .. ' ' .. order)
    redis.call('PEXPIRE', g, ttl)
    return nil
  end
  if rule.resetOnEarlyRetry then
    redis.call('HSET', g, key, ARGV[3] .. ' - ' .. order)
    redis.call('PEXPIRE', g, ttl)
    return {'early', num(rule.minDelayMs), '1'}
  end
  return {'early', num(rule.minDelayMs - waited), '0'}
end

-- The first rule with something to say (rule-book.ts #firstVerdict): the
-- verdict as a flat list {kind, to, ...}, and whether a rule was spent.
local function verdict(a, state, stage, tripleKey, maxTriples)
  for _, rule in ipairs(state.rules) do
    local kind = rule.kind
    if kind == 'disconnect' then
      if acts(rule, stage) then
        spend(rule)
        return {'disconnect', a}, true
      end
    elseif kind == 'defer' or kind == 'reject' then
      if acts(rule, stage) then
        spend(rule)
        local text = rule.text
        if text == cjson.null then text = '' end
        return {kind, a, num(rule.code), rule.enhancedCode, text}, true
      end
    elseif kind == 'rate_limit' or kind == 'unavailable' then
      if acts(rule, stage) then
        spend(rule)
        local extra = rule.retryAfterMs
        if kind == 'unavailable' then extra = rule.status end
        return {kind, a, num(rule.code), rule.enhancedCode, num(extra)}, true
      end
    elseif kind == 'throttle' then
      if stage == 'rcpt' then
        local inWindow = redis.call('ZCOUNT', T(a), '(' .. num(now - rule.perMs), '+inf')
        if inWindow >= rule.limit then return {'throttle', a, num(rule.limit), num(rule.perMs), num(inWindow)}, false end
      end
    elseif kind == 'greylist' then
      if stage == 'rcpt' then
        local answer = greylist(a, rule, tripleKey, maxTriples)
        if answer then return {'greylist', a, answer[1], answer[2], answer[3]}, false end
      end
    end
  end
  return nil, false
end

-- a recipient let through at RCPT counts toward the address's throttles (throttle.ts)
local function countAccepted(a, state)
  local keep = 0
  for _, rule in ipairs(state.rules) do
    if rule.kind == 'throttle' and rule.perMs > keep then keep = rule.perMs end
  end
  local t = T(a)
  if keep == 0 then
    redis.call('DEL', t)
    return
  end
  redis.call('ZREMRANGEBYSCORE', t, '-inf', num(now - keep))
  redis.call('ZADD', t, ARGV[3], redis.call('INCR', LAB_SEQ))
  redis.call('PEXPIRE', t, math.max(ttl, keep))
end

-- the first recipient (in order) whose rules answer decides
local function decide(stage, recipients, states, tripleKey, maxTriples)
  for _, a in ipairs(recipients) do
    local state = states[a]
    if state then
      local v, spent = verdict(a, state, stage, tripleKey, maxTriples)
      if spent then save(a, state) end
      if v then return v end
      if stage == 'rcpt' then countAccepted(a, state) end
    end
  end
  return {}
end

if op == 'step' or op == 'decide' then
  -- ARGV: 6 stage, 7 tripleKey (of the one recipient at RCPT), 8 maxTriples, 9.. recipients
  -- step answers {} when no recipient has rules, else {holdMs, heldFor, verdict...} (no verdict with a hold)
  -- decide answers {} or the verdict
  local stage, tripleKey, maxTriples = ARGV[6], ARGV[7], tonumber(ARGV[8])
  local ruled, states = {}, {}
  for i = 9, #ARGV do
    local state = load(ARGV[i])
    if state then
      table.insert(ruled, ARGV[i])
      states[ARGV[i]] = state
    end
  end
  if op == 'decide' then return decide(stage, ruled, states, tripleKey, maxTriples) end
  if #ruled == 0 then return {} end
  local holdMs, heldFor = 0, nil
  for _, a in ipairs(ruled) do
    local state = states[a]
    local delay, changed = hold(state, stage)
    if delay > holdMs then holdMs = delay end
    if changed then save(a, state) else redis.call('PEXPIRE', R(a), ttl) end
    if not heldFor then
      for _, rule in ipairs(state.rules) do
        if rule.kind == 'slow' then heldFor = a break end
      end
    end
  end
  if holdMs > 0 then return {num(holdMs), heldFor or ruled[1]} end
  local out = {'0', ruled[1]}
  for _, v in ipairs(decide(stage, ruled, states, tripleKey, maxTriples)) do table.insert(out, v) end
  return out
elseif op == 'add' then
  -- ARGV: 6 mailbox, 7 the rule as JSON (without its id), 8 the most rules an address may hold
  -- answers {1, rules JSON} or {0, how many live rules the address holds}
  local a = ARGV[6]
  local state = load(a) or {next = 1}
  local live = {}
  for _, rule in ipairs(state.rules or {}) do
    if rule.remaining ~= 0 then table.insert(live, rule) end
  end
  if #live >= tonumber(ARGV[8]) then return {0, #live} end
  local rule = cjson.decode(ARGV[7])
  rule.id = 'r' .. num(state.next)
  state.next = state.next + 1
  -- used-up rules are dropped when a new one comes
  table.insert(live, rule)
  state.rules = live
  save(a, state)
  return {1, cjson.encode(live)}
elseif op == 'rules' then
  -- ARGV: 6 mailbox; answers the rules as JSON, or '' for none
  local state = load(ARGV[6])
  if not state then return '' end
  return cjson.encode(state.rules)
elseif op == 'clear' then
  -- ARGV: 6 mailbox; answers how many rules there were
  local a = ARGV[6]
  local state = load(a)
  redis.call('DEL', R(a), G(a), T(a))
  if not state then return 0 end
  return #state.rules
elseif op == 'record' then
  -- ARGV: 6 mailbox, 7 the attempt's time, 8 the attempt as JSON, 9 the cap per address, 10 the cap on the whole log
  return logAttempt(ARGV[6], ARGV[7], ARGV[8], tonumber(ARGV[9]), tonumber(ARGV[10]))
elseif op == 'attempts' then
  -- ARGV: 6 mailbox, 7 the cap on the whole log; answers the address's entries, oldest first
  sweepLog(tonumber(ARGV[7]))
  return redis.call('LRANGE', labLogOf(ARGV[6]), 0, -1)
elseif op == 'forget' then
  -- ARGV: 6 mailbox; its rules, their memory and its log
  local a = ARGV[6]
  local key = labLogOf(a)
  local entries = redis.call('LRANGE', key, 0, -1)
  for _, m in ipairs(entries) do
    redis.call('ZREM', LAB_LOG, string.match(m, '^%d+') .. ' ' .. a)
  end
  redis.call('DEL', key, R(a), G(a), T(a))
  return #entries
elseif op == 'count' then
  -- attempts held in all, for tests of the bounds
  sweepLog(tonumber(ARGV[6]))
  return redis.call('ZCARD', LAB_LOG)
end
return redis.error_reply('mailroom: unknown lab operation ' .. tostring(op))
