-- acquire.lua for one permit of a semaphore: takes permit k when it is free, or refreshes it
-- for the same token, exactly as acquire.lua takes a lock (the permit is a lock of its own, with
-- its own fence counter), and guards the semaphore's N with its limit key.
-- Returns {outcome, fence, incarnated, limit, mine, held, seconds, microseconds} with outcome
--   0 = permit k is held by another, 1 = taken, 2 = refreshed for the same token,
--   3 = mismatch: the limit key holds another N (returned as limit); nothing written,
--   4 = this token holds another permit here (returned as mine); nothing written,
-- and held a string of N characters, '1' where a permit is held here by another token (as read
-- before this call wrote anything), from which the engine picks the next permit to try; then
-- the node's TIME, for the engine's clock watch (see acquire.lua).
-- The limit key lives at least as long as the longest permit on this node: this call and every
-- extend of a permit (extend_permits.lua) push its expiry out to the permit's, never in, so
-- while any permit granted under N is held here no caller with another N is admitted here.
-- KEYS: permit k, incarnation, counter of k, fence-max, limit, permit 1 .. permit N
-- ARGV: token, ttl-ms, owner, round id, N, k[, floor]
-- The floor (absent or 0: none) is a thrifty round's, as in acquire.lua: a counter that starts
-- here starts at it when it is above fence-max + 1, so the round's nodes draw the same fence.
local incarnated = redis.call('EXISTS', KEYS[2])
local now = redis.call('TIME')
local n = tonumber(ARGV[5])
local k = tonumber(ARGV[6])
local limit = redis.call('GET', KEYS[5])
if limit and limit ~= ARGV[5] then
  return {3, 0, incarnated, limit, 0, '', now[1], now[2]}
end
local held = {}
local mine = 0
for i = 1, n do
  local token = string.match(redis.call('GET', KEYS[5 + i]) or '', '^(%S+) ')
  if token == ARGV[1] then
    mine = i
    held[i] = '0'
  elseif token then
    held[i] = '1'
  else
    held[i] = '0'
  end
end
held = table.concat(held)
if mine ~= 0 and mine ~= k then
  return {4, 0, incarnated, ARGV[5], mine, held, now[1], now[2]}
end
local owner = ARGV[3] == '' and '' or '\n' .. ARGV[3]
local outcome
local fence = '0'
local value = redis.call('GET', KEYS[1])
if value then
  local token, kept, rounds = string.match(value, '^(%S+) (%d+) ([^\n]+)')
  if token ~= ARGV[1] then
    return {0, 0, incarnated, ARGV[5], 0, held, now[1], now[2]}
  end
  local ids = {}
  for id in string.gmatch(rounds, '%S+') do
    ids[#ids + 1] = id
  end
  ids[#ids + 1] = ARGV[4]
  redis.call('SET', KEYS[1], token .. ' ' .. kept .. ' ' .. table.concat(ids, ' ', math.max(1, #ids - 3)) .. owner,
    'PX', ARGV[2])
  outcome = 2
  fence = kept
else
  if incarnated == 1 then
    local last = redis.call('GET', KEYS[3])
    local max = tonumber(redis.call('GET', KEYS[4]) or '0')
    if last then
      fence = string.format('%d', tonumber(last) + 1)
    else
      fence = string.format('%d', math.max(max + 1, tonumber(ARGV[7] or '0')))
    end
    redis.call('SET', KEYS[3], fence, 'PX', ARGV[2])
    if tonumber(fence) > max then
      redis.call('SET', KEYS[4], fence)
    end
  end
  redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. fence .. ' ' .. ARGV[4] .. owner, 'PX', ARGV[2])
  outcome = 1
end
-- The limit outlives every permit here: its expiry only ever moves out.
if redis.call('PTTL', KEYS[5]) < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[5], ARGV[5], 'PX', ARGV[2])
end
return {outcome, fence, incarnated, ARGV[5], mine, held, now[1], now[2]}
