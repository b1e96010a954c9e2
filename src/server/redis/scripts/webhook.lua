-- The Redis webhook store's one Lua script (redis-webhook-store.ts): the
-- registrations, each endpoint's queue of pending events, the leases on
-- attempts in flight, the delivery log and the dead letters, changed inside
-- Redis, atomic and in one round trip, so two servers never hand out the
-- same attempt.
--
-- Keys, under the store's prefix P (W = P:wh:):
--   W reg            hash: webhook id -> the registration (JSON)
--   W order          sorted set: webhook ids by registration (seq): oldest first
--   W seq            the counter that orders registrations, the log and the queues
--   W tok            the counter that names leases
--   W due            sorted set: webhook id -> when its next attempt is due (or its lease runs out)
--   W pending        how many events are pending, over every webhook
--   W held           hash: webhook id -> "event seq due until": `out_of_order`'s event held for a second one
--   W confirmed      hash: webhook id -> when its subscription was confirmed (an SES webhook's: webhooks/subscription.ts)
--   W ps:last        hash: address -> the last provider send to it (JSON; webhooks/provider-events/send-log.ts)
--   W ps:lastq       sorted set: those addresses by when (seq): the oldest forgotten past the bound
--   W ps:supp        hash: "provider address" -> why that provider suppresses the address (a `dropped` event's detail)
--   W ps:suppq       sorted set: those keys by when (seq)
--   W d:<id>         hash: event id -> the delivery (JSON, written by the server that made the attempt)
--   W log:<id>       sorted set: event ids by when they were queued (seq): the log, oldest first
--   W q:<id>         sorted set: pending event ids in the order they go (seq)
--   W t:<id>         sorted set: pending event id -> its next attempt's time, or its lease's end while in flight
--   W l:<id>         hash: event id -> its lease, "token owner until since"
--   W fin:<id>       sorted set: finished event ids by when they finished: the first to go when the log is full
--   W r:<id>         hash: event id -> a message body it holds: written by older versions only (see below)
--   channel W changed  "+id" when a webhook is registered, "-id" when removed
--   channel W due      "time origin": something became due at that time (an event queued, retried, replayed) through that server
--
-- A `message.received` event names its message (mailbox and id) and holds
-- nothing of it: the server making an attempt reads the source from the
-- mail store then (redis-webhook-store.ts `readSource`), and an event whose
-- mail expired, was evicted or deleted is dead-lettered `gone`. (Servers
-- before this held a reference on the body, P:b:<body>'s `refs`, noted in
-- W r:<id>; `release` still lets go of those as their events finish.)

-- Every call names the server making it (ARGV 4, taken out before the
-- operation's own arguments are read). Times come from the server's clock
-- (ARGV now), as in the store's script.
-- What is due is decided here; what an attempt's answer means (the retry
-- policy) is decided by the server that made it (webhooks/attempt.ts),
-- which writes the delivery back with `complete`.

local P = ARGV[1]
local op = ARGV[2]
local now = tonumber(ARGV[3])
-- the server making the call: named in what it announces, so it need not act on its own announcements
local ORIGIN = table.remove(ARGV, 4)
local W = P .. ':wh:'
local REG, ORDER, DUE, HELD, SEQ, PENDING = W .. 'reg', W .. 'order', W .. 'due', W .. 'held', W .. 'seq', W .. 'pending'
local CONFIRMED = W .. 'confirmed'
-- An event held until its webhook's subscription is confirmed is due at the end of time (the latest
-- JavaScript date): never claimed, and `confirm` makes it due now.
local HELD_UNTIL_CONFIRMED = 8640000000000000

local function K(kind, id) return W .. kind .. ':' .. id end
local function num(x) return string.format('%.17g', x) end

local function registration(id)
  local raw = redis.call('HGET', REG, id)
  if not raw then return nil, nil end
  return cjson.decode(raw), raw
end

-- The webhook's next due time in W due: an ordered endpoint's head only (it
-- goes alone, in order), else its earliest pending event.
local function refresh(id, ordered)
  local due
  if ordered then
    local head = redis.call('ZRANGE', K('q', id), 0, 0)[1]
    if head then due = redis.call('ZSCORE', K('t', id), head) end
  else
    due = redis.call('ZRANGE', K('t', id), 0, 0, 'WITHSCORES')[2]
  end
  if due then redis.call('ZADD', DUE, due, id) else redis.call('ZREM', DUE, id) end
  return due
end

local function announce(due)
  if due then redis.call('PUBLISH', W .. 'due', due .. ' ' .. ORIGIN) end
end

-- Lets go of the message body an event holds.
local function release(id, ev)
  local r = K('r', id)
  local body = redis.call('HGET', r, ev)
  if not body then return end
  redis.call('HDEL', r, ev)
  local bkey = P .. ':b:' .. body
  if redis.call('EXISTS', bkey) == 1 and redis.call('HINCRBY', bkey, 'refs', -1) <= 0 then redis.call('DEL', bkey) end
end

local function lease(id, ev)
  local raw = redis.call('HGET', K('l', id), ev)
  if not raw then return nil end
  local token, owner, untilAt, since = string.match(raw, '^(%S+) (%S+) (%S+) (%S+)$')
  return {token = token, owner = owner, untilAt = untilAt, since = since, raw = raw}
end

-- Hands up to `limit` of webhook `id`'s due events to `owner` under a lease, appending to `claims`
-- per claim: webhook id, registration, event id, delivery, token, the run-out lease before it ('' for none).
local function claimFrom(id, limit, owner, leaseMs, claims)
  local reg, raw = registration(id)
  if not reg then
    redis.call('ZREM', DUE, id)
    return
  end
  local q, t, l = K('q', id), K('t', id), K('l', id)
  local evs = {}
  if reg.ordered then
    local head = redis.call('ZRANGE', q, 0, 0)[1]
    if head then
      local at = redis.call('ZSCORE', t, head)
      if at and tonumber(at) <= now then evs[1] = head end
    end
  else
    evs = redis.call('ZRANGEBYSCORE', t, '-inf', num(now), 'LIMIT', 0, limit)
  end
  for _, ev in ipairs(evs) do
    local delivery = redis.call('HGET', K('d', id), ev)
    if not delivery then
      -- not in the log any more: nothing to send
      redis.call('ZREM', q, ev)
      redis.call('ZREM', t, ev)
      redis.call('HDEL', l, ev)
    else
      local before = lease(id, ev)
      local token = redis.call('INCR', W .. 'tok')
      redis.call('HSET', l, ev, token .. ' ' .. owner .. ' ' .. num(now + leaseMs) .. ' ' .. num(now))
      redis.call('ZADD', t, num(now + leaseMs), ev)
      for _, v in ipairs({id, raw, ev, delivery, tostring(token), before and (before.since .. ' ' .. before.untilAt) or ''}) do table.insert(claims, v) end
    end
  end
  return refresh(id, reg.ordered)
end

-- Sets field `f` of hash `h` to `v`, the newest in `q`; past `max` fields the oldest go (send-log.ts's bound).
local function keep(h, q, f, v, max)
  redis.call('HSET', h, f, v)
  redis.call('ZADD', q, redis.call('INCR', SEQ), f)
  local over = redis.call('ZCARD', q) - max
  if over > 0 then
    local popped = redis.call('ZPOPMIN', q, over)
    for i = 1, #popped, 2 do redis.call('HDEL', h, popped[i]) end
  end
end

-- A claim's answer: when the next attempt of all is due ('' for nothing pending), how many events are pending, then the claims.
local function batch(claims)
  local out = {redis.call('ZRANGE', DUE, 0, 0, 'WITHSCORES')[2] or '', redis.call('GET', PENDING) or '0'}
  for _, v in ipairs(claims) do table.insert(out, v) end
  return out
end

if op == 'add' then
  -- ARGV: 4 id, 5 registration; one already there is kept (a static webhook given to several servers)
  local kept = redis.call('HGET', REG, ARGV[4])
  if kept then return kept end
  redis.call('HSET', REG, ARGV[4], ARGV[5])
  redis.call('ZADD', ORDER, redis.call('INCR', SEQ), ARGV[4])
  redis.call('PUBLISH', W .. 'changed', '+' .. ARGV[4])
  return ARGV[5]
elseif op == 'registrations' then
  -- answers id, registration, order for each, oldest first; or one (ARGV 4)
  local ids = ARGV[4] and {ARGV[4]} or redis.call('ZRANGE', ORDER, 0, -1)
  local out = {}
  for _, id in ipairs(ids) do
    local raw = redis.call('HGET', REG, id)
    if raw then
      table.insert(out, id)
      table.insert(out, raw)
      table.insert(out, redis.call('ZSCORE', ORDER, id) or '0')
    end
  end
  return out
elseif op == 'remove' then
  -- ARGV: 4 id; answers the registration removed, or nil
  local id = ARGV[4]
  local raw = redis.call('HGET', REG, id)
  if not raw then return false end
  local held = redis.call('HKEYS', K('r', id))
  for _, ev in ipairs(held) do release(id, ev) end
  local pending = redis.call('ZCARD', K('q', id))
  if pending > 0 then redis.call('DECRBY', PENDING, pending) end
  redis.call('HDEL', REG, id)
  redis.call('ZREM', ORDER, id)
  redis.call('ZREM', DUE, id)
  redis.call('HDEL', HELD, id)
  redis.call('HDEL', CONFIRMED, id)
  redis.call('DEL', K('d', id), K('log', id), K('q', id), K('t', id), K('l', id), K('fin', id), K('r', id))
  redis.call('PUBLISH', W .. 'changed', '-' .. id)
  return raw
elseif op == 'enqueue' then
  -- ARGV: 4 most deliveries kept per webhook, 5 event id, 6 delivery, 7 message id ('' for none; not read: an event holds no body),
  -- 8 out_of_order's hold (ms), then (webhook id, due, '1' when it waits for the webhook's subscription to be
  -- confirmed) per webhook; answers 1 (kept) or 0 per webhook
  local max, ev, delivery, hold = tonumber(ARGV[4]), ARGV[5], ARGV[6], tonumber(ARGV[8])
  local out = {}
  for i = 9, #ARGV, 3 do
    local id, due, waits = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2] == '1'
    local reg = registration(id)
    local kept = 0
    if reg then
      local d = K('d', id)
      -- a full log drops the delivery that finished first; pending ones are never dropped for a newer event
      local room = redis.call('HLEN', d) < max
      while not room do
        local gone = redis.call('ZPOPMIN', K('fin', id))[1]
        if not gone then break end
        redis.call('HDEL', d, gone)
        redis.call('ZREM', K('log', id), gone)
        release(id, gone)
        room = redis.call('HLEN', d) < max
      end
      if room and redis.call('HEXISTS', d, ev) == 0 then
        local seq = redis.call('INCR', SEQ)
        local place, at = seq, due
        if waits and redis.call('HEXISTS', CONFIRMED, id) == 0 then
          at = HELD_UNTIL_CONFIRMED
        elseif reg.outOfOrder then
          -- swapped pairs: the first of two is held for a second, which then goes first
          local held = redis.call('HGET', HELD, id)
          local hev, hseq, hdue, huntil
          if held then hev, hseq, hdue, huntil = string.match(held, '^(%S+) (%S+) (%S+) (%S+)$') end
          if held and tonumber(huntil) > now and redis.call('ZSCORE', K('q', id), hev) then
            place = tonumber(hseq) - 0.5
            redis.call('ZADD', K('t', id), num(math.max(tonumber(hdue), at) + 1), hev)
            redis.call('HDEL', HELD, id)
          else
            redis.call('HSET', HELD, id, ev .. ' ' .. seq .. ' ' .. num(due) .. ' ' .. num(now + hold))
            at = math.max(due, now + hold)
          end
        end
        redis.call('HSET', d, ev, delivery)
        redis.call('ZADD', K('log', id), seq, ev)
        redis.call('ZADD', K('q', id), num(place), ev)
        redis.call('ZADD', K('t', id), num(at), ev)
        redis.call('INCR', PENDING)
        kept = 1
        announce(refresh(id, reg.ordered))
      end
    end
    table.insert(out, kept)
  end
  return out
elseif op == 'claim' then
  -- ARGV: 4 owner, 5 limit, 6 lease (ms); answers a batch (see batch())
  local owner, limit, leaseMs = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
  local claims = {}
  if limit > 0 then
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', DUE, '-inf', num(now), 'LIMIT', 0, limit)) do
      if #claims / 6 >= limit then break end
      claimFrom(id, limit - #claims / 6, owner, leaseMs, claims)
    end
  end
  return batch(claims)
elseif op == 'renew' then
  -- ARGV: 4 lease (ms), then (webhook id, event id, token) per attempt in flight; answers 1 (renewed) or 0 (lost) per attempt
  local leaseMs = tonumber(ARGV[4])
  local out = {}
  for i = 5, #ARGV, 3 do
    local id, ev, token = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    local held = lease(id, ev)
    local reg = registration(id)
    if reg and held and held.token == token then
      redis.call('HSET', K('l', id), ev, token .. ' ' .. held.owner .. ' ' .. num(now + leaseMs) .. ' ' .. held.since)
      redis.call('ZADD', K('t', id), num(now + leaseMs), ev)
      refresh(id, reg.ordered)
      table.insert(out, 1)
    else
      table.insert(out, 0)
    end
  end
  return out
elseif op == 'release' then
  -- ARGV: (webhook id, event id, token) per claim given back unattempted (the server is closing): due again now
  for i = 4, #ARGV, 3 do
    local id, ev, token = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    local held = lease(id, ev)
    local reg = registration(id)
    if reg and held and held.token == token then
      redis.call('HDEL', K('l', id), ev)
      redis.call('ZADD', K('t', id), num(now), ev)
      announce(refresh(id, reg.ordered))
    end
  end
  return 1
elseif op == 'complete' then
  -- ARGV: 4 webhook id, 5 event id, 6 token, 7 delivery, 8 state, 9 next attempt (ms, while pending),
  -- 10 how many of the webhook's due events to claim for this server at once (0: none), 11 lease (ms).
  -- Answers 1, or 0 when the lease was lost; then a batch (see batch()) of what was claimed.
  local id, ev, token, state = ARGV[4], ARGV[5], ARGV[6], ARGV[8]
  local follow, leaseMs = tonumber(ARGV[10] or '0'), tonumber(ARGV[11] or '0')
  local held = lease(id, ev)
  local reg = registration(id)
  local saved = 0
  local claims = {}
  if reg and held and held.token == token and redis.call('HEXISTS', K('d', id), ev) == 1 then
    redis.call('HDEL', K('l', id), ev)
    redis.call('HSET', K('d', id), ev, ARGV[7])
    if state == 'pending' then
      redis.call('ZADD', K('t', id), ARGV[9], ev)
    else
      redis.call('ZREM', K('q', id), ev)
      redis.call('ZREM', K('t', id), ev)
      redis.call('ZADD', K('fin', id), redis.call('INCR', SEQ), ev)
      redis.call('DECR', PENDING)
      if state ~= 'dead_lettered' then release(id, ev) end
    end
    saved = 1
    -- the endpoint's next event, when it is due now, goes on from this server: no other need be woken for it
    if follow > 0 then claimFrom(id, follow, ORIGIN, leaseMs, claims) end
    announce(refresh(id, reg.ordered))
  end
  local out = batch(claims)
  table.insert(out, 1, saved)
  return out
elseif op == 'replay' then
  -- ARGV: 4 webhook id, 5 event id, 6 the dead letter as read, 7 the delivery to queue again. The
  -- server decides (webhooks/shared-dispatcher.ts); this only checks that the dead letter is still
  -- what it read (a compare-and-set: no JSON is taken apart here). Answers 1, or 0 when it changed.
  local id, ev = ARGV[4], ARGV[5]
  local reg = registration(id)
  if not reg then return 0 end
  local d = K('d', id)
  if redis.call('HGET', d, ev) ~= ARGV[6] or redis.call('ZSCORE', K('fin', id), ev) == false then return 0 end
  redis.call('HSET', d, ev, ARGV[7])
  redis.call('ZREM', K('fin', id), ev)
  redis.call('ZADD', K('q', id), redis.call('INCR', SEQ), ev)
  redis.call('ZADD', K('t', id), num(now), ev)
  redis.call('INCR', PENDING)
  announce(refresh(id, reg.ordered))
  return 1
elseif op == 'confirm' then
  -- ARGV: 4 webhook id. Its subscription confirmed: its held events due now. Answers 1 the first time, else 0.
  local id = ARGV[4]
  local reg = registration(id)
  if not reg or redis.call('HSETNX', CONFIRMED, id, num(now)) == 0 then return 0 end
  local t = K('t', id)
  for _, ev in ipairs(redis.call('ZRANGEBYSCORE', t, num(HELD_UNTIL_CONFIRMED), '+inf')) do redis.call('ZADD', t, num(now), ev) end
  announce(refresh(id, reg.ordered))
  return 1
elseif op == 'confirmed' then
  -- ARGV: 4 webhook id; answers when its subscription was confirmed, or nil
  return redis.call('HGET', CONFIRMED, ARGV[4])
elseif op == 'sent' then
  -- ARGV: 4 address, 5 the send (JSON), 6 its suppression key, 7 how many are kept. Answers why the
  -- provider suppresses the address, or nil.
  keep(W .. 'ps:last', W .. 'ps:lastq', ARGV[4], ARGV[5], tonumber(ARGV[7]))
  return redis.call('HGET', W .. 'ps:supp', ARGV[6])
elseif op == 'lastsend' then
  -- ARGV: 4 address; answers the last provider send to it (JSON), or nil
  return redis.call('HGET', W .. 'ps:last', ARGV[4])
elseif op == 'suppress' then
  -- ARGV: 4 suppression key, 5 reason, 6 how many are kept
  keep(W .. 'ps:supp', W .. 'ps:suppq', ARGV[4], ARGV[5], tonumber(ARGV[6]))
  return 1
elseif op == 'log' then
  -- ARGV: 4 webhook id, 5 event id (optional: that one only); answers the deliveries, oldest first
  local d = K('d', ARGV[4])
  local evs = ARGV[5] and {ARGV[5]} or redis.call('ZRANGE', K('log', ARGV[4]), 0, -1)
  local out = {}
  for _, ev in ipairs(evs) do
    local raw = redis.call('HGET', d, ev)
    if raw then table.insert(out, raw) end
  end
  return out
elseif op == 'pending' then
  return redis.call('GET', PENDING) or '0'
end
return redis.error_reply('unknown webhook store operation ' .. tostring(op))
