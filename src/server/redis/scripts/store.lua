-- The Redis store's one Lua script: every operation runs inside Redis, atomic
-- and in one round trip, so replicas never see half a delivery, the global
-- cap and retention hold across them, and ids are issued by one counter.
--
-- Keys, under a prefix P (default `mailroom`):
--   P:seq            the id counter (INCRBY; raised to now * 1024 when behind, like ids.ts)
--   P:arrivals       sorted set of every live id, all at score 0: ordered by id (lexicographic = arrival)
--   P:mb:<mailbox>   the same, per mailbox
--   P:m:<id>         hash: mb, at (received, ms), size, body (the body's key suffix)
--   P:b:<bodyId>     one per message, not per recipient: a string, "<from's length> <summary's length>\n" .. from ..
--                    summary (summary-record.ts) .. raw, its id marked by a leading `s` (packedBody below). Bodies
--                    stored before 2026-12-04 are hashes (raw, from, summary, refs), read and removed as such
--   P:r:<bodyId>     the count of copies pointing at a packed body, kept only while more than one does
--   P:ev:<mailbox>   hash: count, newest (what the cap evicted from the mailbox)
--   P:boxes          sorted set of the mailboxes holding mail, scored by their newest id (as a number): the web UI's index,
--                    kept by every delivery and removal and read a page at a time (op `mailboxes`)
--   channel P:arrived  one JSON message per stored copy: {r: replica, id, mb, at, size, body, from, s: summary}
--   channel P:removed  one JSON message per removed copy (deleted, expired, evicted): {id, mb}
--   and, for op `deliverLogged`, the lab's (lab-shared.lua, included below): whether a recipient has rules, the attempt log
--
-- Retention is enforced from the server's clock (ARGV `now`) on every call, as
-- the memory store does, so an injected clock holds for Redis too; every key
-- also carries a Redis expiry of the retention plus a margin, so a store that
-- no server sweeps any more still empties itself.
--
-- Key names are built inside the script: this targets one Redis (or a
-- primary with replicas behind Sentinel), not Redis Cluster.

local P = ARGV[1]
local op = ARGV[2]
local now = tonumber(ARGV[3])
local retention = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local A = P .. ':arrivals'
-- include: lab-shared.lua

local DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz'
local function base36(n)
  local out = ''
  for i = 1, 11 do
    local d = math.fmod(n, 36)
    out = string.sub(DIGITS, d + 1, d + 1) .. out
    n = (n - d) / 36
  end
  return out
end

local function number36(id)
  local n = 0
  for i = 1, #id do n = n * 36 + (string.find(DIGITS, string.sub(id, i, i), 1, true) - 1) end
  return n
end

-- A body is one string rather than a hash of four fields: in a hash, the
-- source is a field of its own, and the hash's table, entries and three more
-- strings cost about 500 bytes a message beside a 2 KiB source (redis-server's
-- used_memory per message, bench/store-bytes.ts: 4,128 bytes, 2.02x raw).
-- Its head says where from and summary end, so a listing reads them with
-- GETRANGE and never copies the source into the script.
local function packedBody(bodyId) return string.byte(bodyId, 1) == 115 end -- 's'
local BODY_HEAD_READ = 511

-- from, summary (nil when the body is gone), and the source's offset in a packed body.
local function bodyMeta(bodyId)
  local bkey = P .. ':b:' .. bodyId
  if not packedBody(bodyId) then
    local b = redis.call('HMGET', bkey, 'from', 'summary')
    return b[1] or '', b[2], nil
  end
  local head = redis.call('GETRANGE', bkey, 0, BODY_HEAD_READ)
  local fromLength, summaryLength, rest = string.match(head, '^(%d+) (%d+)\n()')
  if not rest then return '', nil, nil end
  local stop = rest + tonumber(fromLength) + tonumber(summaryLength)
  if stop - 1 > #head then head = redis.call('GETRANGE', bkey, 0, stop - 2) end
  local fromEnd = rest + tonumber(fromLength)
  return string.sub(head, rest, fromEnd - 1), string.sub(head, fromEnd, stop - 1), stop
end

local function bodySource(bodyId)
  if not packedBody(bodyId) then return redis.call('HGET', P .. ':b:' .. bodyId, 'raw') or '' end
  local _, summary, start = bodyMeta(bodyId)
  if not summary then return '' end
  return redis.call('GETRANGE', P .. ':b:' .. bodyId, start - 1, -1)
end

local function remove(id)
  local mkey = P .. ':m:' .. id
  local f = redis.call('HMGET', mkey, 'mb', 'body', 'at')
  redis.call('ZREM', A, id)
  if f[1] then
    local mbkey = P .. ':mb:' .. f[1]
    redis.call('ZREM', mbkey, id)
    local top = redis.call('ZRANGE', mbkey, -1, -1)[1]
    if top then redis.call('ZADD', P .. ':boxes', number36(top), f[1]) else redis.call('ZREM', P .. ':boxes', f[1]) end
    redis.call('PUBLISH', P .. ':removed', cjson.encode({id = id, mb = f[1]}))
  end
  redis.call('DEL', mkey)
  if f[2] then
    local bkey = P .. ':b:' .. f[2]
    if not packedBody(f[2]) then
      if redis.call('HINCRBY', bkey, 'refs', -1) <= 0 then redis.call('DEL', bkey) end
    else
      -- no count kept: this was its only copy (DECR of a missing count answers -1)
      local rkey = P .. ':r:' .. f[2]
      if redis.call('DECR', rkey) <= 0 then redis.call('DEL', bkey, rkey) end
    end
  end
  return f
end

-- Drops what outlived the retention, oldest first; at most 1000 per call (reads also filter by age).
local function expire()
  local cutoff = now - retention
  for i = 1, 1000 do
    local oldest = redis.call('ZRANGE', A, 0, 0)[1]
    if not oldest then return end
    local at = redis.call('HGET', P .. ':m:' .. oldest, 'at')
    if at and tonumber(at) > cutoff then return end
    remove(oldest)
  end
end

-- id, at, size, from, summary of each listed id still alive (in the order given).
local function describe(ids, mailbox)
  local out = {}
  local cutoff = now - retention
  for _, id in ipairs(ids) do
    local f = redis.call('HMGET', P .. ':m:' .. id, 'mb', 'at', 'size', 'body')
    if f[1] == mailbox and f[2] and tonumber(f[2]) > cutoff then
      local from, summary = bodyMeta(f[4])
      -- (a body gone under Redis's own expiry takes its copies with it)
      if summary then
        table.insert(out, id)
        table.insert(out, f[2])
        table.insert(out, f[3])
        table.insert(out, f[4])
        table.insert(out, from)
        table.insert(out, summary)
      end
    elseif not f[1] then
      -- its hash expired under Redis's own expiry: the indexes let it go too
      redis.call('ZREM', A, id)
      redis.call('ZREM', P .. ':mb:' .. mailbox, id)
    end
  end
  return out
end

-- Stores raw once and a copy per mailbox (distinct), applies the global cap
-- (max, -1 for none) and announces what stayed. Answers the body's id, the
-- copies' ids in order, '--', then (id, mailbox, at) of each message the cap
-- pushed out; ids holds the copies' ids.
local function deliver(max, replica, from, raw, summary, mailboxes, ids)
  expire()
  local n = #mailboxes
  local floor = now * 1024
  local seq = tonumber(redis.call('GET', P .. ':seq') or '0')
  if seq < floor then redis.call('SET', P .. ':seq', string.format('%.0f', floor)) end
  local last = redis.call('INCRBY', P .. ':seq', n)
  local first = last - n + 1
  local bodyId = 's' .. base36(first)
  local bkey = P .. ':b:' .. bodyId
  redis.call('SET', bkey, #from .. ' ' .. #summary .. '\n' .. from .. summary .. raw, 'PX', ttl)
  if n > 1 then redis.call('SET', P .. ':r:' .. bodyId, n, 'PX', ttl) end
  local size = string.len(raw)
  for i = 1, n do
    local id = base36(first + i - 1)
    local mailbox = mailboxes[i]
    local mkey = P .. ':m:' .. id
    redis.call('HSET', mkey, 'mb', mailbox, 'at', ARGV[3], 'size', size, 'body', bodyId)
    redis.call('PEXPIRE', mkey, ttl)
    redis.call('ZADD', A, 0, id)
    redis.call('ZADD', P .. ':mb:' .. mailbox, 0, id)
    redis.call('PEXPIRE', P .. ':mb:' .. mailbox, ttl)
    redis.call('ZADD', P .. ':boxes', first + i - 1, mailbox)
    ids[i] = id
  end
  redis.call('PEXPIRE', A, ttl)
  redis.call('PEXPIRE', P .. ':boxes', ttl)
  -- the global cap: the oldest go first, whoever stored them
  local evicted = {}
  if max >= 0 then
    while redis.call('ZCARD', A) > max do
      local oldest = redis.call('ZRANGE', A, 0, 0)[1]
      local f = remove(oldest)
      if f[1] then
        local ekey = P .. ':ev:' .. f[1]
        redis.call('HINCRBY', ekey, 'count', 1)
        redis.call('HSET', ekey, 'newest', oldest)
        redis.call('PEXPIRE', ekey, ttl)
        table.insert(evicted, oldest)
        table.insert(evicted, f[1])
        table.insert(evicted, f[3] or '0')
      end
    end
  end
  -- announced only once stored, and only the copies the cap left in place
  local out = {bodyId}
  for i = 1, n do
    local id = ids[i]
    table.insert(out, id)
    if #evicted == 0 or redis.call('EXISTS', P .. ':m:' .. id) == 1 then
      redis.call('PUBLISH', P .. ':arrived', cjson.encode({r = replica, id = id, mb = mailboxes[i], at = ARGV[3], size = size, body = bodyId, from = from, s = summary}))
    end
  end
  table.insert(out, '--')
  for _, v in ipairs(evicted) do table.insert(out, v) end
  return out
end

if op == 'deliver' then
  -- ARGV: 6 maxMessages (-1: none), 7 replica, 8 from, 9 raw, 10 summary, 11.. mailboxes (distinct)
  local mailboxes = {}
  for i = 11, #ARGV do table.insert(mailboxes, ARGV[i]) end
  return deliver(tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9], ARGV[10], mailboxes, {})
elseif op == 'deliverLogged' then
  -- The end of DATA with the deferral lab on, for mail to addresses without
  -- rules: delivered as `deliver` and each copy's accepted attempt logged, in
  -- one run. When a recipient has rules nothing is done and the answer is
  -- {'ruled'}: the lab's steps decide first (lab.lua), then `deliver`.
  -- ARGV: 6 maxMessages, 7 replica, 8 from, 9 raw, 10 summary, 11 the log's cap per address, 12 its cap
  -- in all, 13.. per mailbox (distinct): the mailbox, its attempt's time, the attempt as JSON with a NUL
  -- byte wherever the copy's id goes (JSON never holds one raw: it escapes every control character)
  local mailboxes, entryAt = {}, {}
  for i = 13, #ARGV, 3 do
    if redis.call('EXISTS', labRulesOf(ARGV[i])) == 1 then return {'ruled'} end
    table.insert(mailboxes, ARGV[i])
    table.insert(entryAt, i + 1)
  end
  local ids = {}
  local out = deliver(tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9], ARGV[10], mailboxes, ids)
  local maxPerAddress, maxAll = tonumber(ARGV[11]), tonumber(ARGV[12])
  for i, mailbox in ipairs(mailboxes) do
    local at = entryAt[i]
    logAttempt(mailbox, ARGV[at], (string.gsub(ARGV[at + 1], '%z', ids[i])), maxPerAddress, maxAll)
  end
  return out
elseif op == 'list' then
  -- ARGV: 6 mailbox, 7 limit, 8 beforeId ('' for the newest)
  expire()
  local top = ARGV[8] == '' and '+' or ('(' .. ARGV[8])
  return describe(redis.call('ZREVRANGEBYLEX', P .. ':mb:' .. ARGV[6], top, '-', 'LIMIT', 0, tonumber(ARGV[7])), ARGV[6])
elseif op == 'newer' then
  -- ARGV: 6 mailbox, 7 sinceId ('' for all)
  expire()
  local bottom = ARGV[7] == '' and '-' or ('(' .. ARGV[7])
  return describe(redis.call('ZREVRANGEBYLEX', P .. ':mb:' .. ARGV[6], '+', bottom), ARGV[6])
elseif op == 'get' then
  -- ARGV: 6 mailbox, 7 id; answers the description and the source
  expire()
  local d = describe({ARGV[7]}, ARGV[6])
  if #d == 0 then return {} end
  table.insert(d, bodySource(d[4]))
  return d
elseif op == 'delete' then
  -- ARGV: 6 mailbox, 7 id
  expire()
  if redis.call('HGET', P .. ':m:' .. ARGV[7], 'mb') ~= ARGV[6] then return 0 end
  remove(ARGV[7])
  return 1
elseif op == 'deleteMailbox' then
  -- ARGV: 6 mailbox
  expire()
  local ids = redis.call('ZRANGE', P .. ':mb:' .. ARGV[6], 0, -1)
  local count = 0
  for _, id in ipairs(ids) do
    local f = remove(id)
    if f[1] then count = count + 1 end
  end
  return count
elseif op == 'mailboxes' then
  -- ARGV: 6 limit, 7 contains ('' for all), 8 cursor (a newest id, '' for the top), 9 the search window.
  -- One page from P:boxes, never the whole set: `limit` entries (plus one, to know whether more
  -- follow), or `window` with `contains` (a substring cannot be looked up, so the search walks).
  -- Answers total, next ('' for none), partial (0/1), visited, then per mailbox: key, count, its
  -- newest described. A mailbox's score is its newest id as a number, so the id is read back from it.
  expire()
  local limit = tonumber(ARGV[6])
  local contains = ARGV[7]
  local B = P .. ':boxes'
  local top = ARGV[8] == '' and '+inf' or ('(' .. string.format('%.0f', number36(ARGV[8])))
  local span = contains == '' and limit or tonumber(ARGV[9])
  local walk = redis.call('ZREVRANGEBYSCORE', B, top, '-inf', 'WITHSCORES', 'LIMIT', 0, span + 1)
  local out = {0, '', 0, 0}
  local visited, matched, returned, more = 0, 0, 0, false
  local lastVisited, lastReturned = '', ''
  for i = 1, #walk, 2 do
    if visited == span then
      more = true
      break
    end
    visited = visited + 1
    local mb = walk[i]
    local newest = base36(tonumber(walk[i + 1]))
    lastVisited = newest
    if contains == '' or string.find(mb, contains, 1, true) then
      if returned < limit then
        local d = describe({newest}, mb)
        if #d == 6 then
          matched = matched + 1
          returned = returned + 1
          lastReturned = newest
          table.insert(out, mb)
          table.insert(out, redis.call('ZCARD', P .. ':mb:' .. mb))
          for _, v in ipairs(d) do table.insert(out, v) end
        else
          -- its keys went under Redis's own expiry: the index lets it go too
          redis.call('ZREM', B, mb)
        end
      else
        matched = matched + 1
      end
    end
  end
  if contains == '' then
    out[1] = redis.call('ZCARD', B)
    if more then out[2] = lastReturned end
  else
    out[1] = matched
    if matched > returned then out[2] = lastReturned elseif more then out[2] = lastVisited end
    if more then out[3] = 1 end
  end
  out[4] = visited
  return out
elseif op == 'count' then
  expire()
  return redis.call('ZCARD', A)
elseif op == 'expire' then
  expire()
  return 0
elseif op == 'evicted' then
  -- ARGV: 6 mailbox
  return redis.call('HMGET', P .. ':ev:' .. ARGV[6], 'count', 'newest')
end
return redis.error_reply('mailroom: unknown store operation ' .. tostring(op))
