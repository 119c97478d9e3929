-- Takes the lock when it is free, or refreshes it for the same token, and returns
-- {outcome, fence, incarnated, seconds, microseconds}: outcome 1 = taken, 2 = refreshed, 0 =
-- held by another; then the node's TIME, which the engine's clock watch checks: a step of this
-- node's wall clock moves every expiry here, and a reply that shows one does not vote.
--
-- A lock is one key. Its value is one header line, then the owner text (for Describe) when
-- there is any:
--   <token> <fence> <round id> [<round id> ...]\n<owner>
-- The round ids name the acquire rounds that wrote it, newest last (at most 4): a failed
-- round's clean-up (abandon.lua) then takes back its own write only, never a lease that a
-- later round of the same token was granted here. A refresh keeps the lease's fence.
--
-- Fences. Per node, each resource's fences must strictly increase; the engine's rule (the max
-- over the granting quorum, raised on lagging holders by raise.lua) turns that into one
-- order across nodes. The resource's counter key remembers its last fence here, but only for
-- a ttl after the take (so a resource locked once leaves nothing behind for good); the node's
-- fence-max is kept at or above every fence this node ever granted, so a counter that has
-- run out restarts above all of them. A counter that lives keeps the nodes in step (they all
-- saw the same takes of this resource); a restarted one starts from each node's own
-- fence-max, which differ, and the engine's raise then costs one more round trip.
-- A node without its incarnation key (restarted empty, quarantined) still writes the lock:
-- it must not vote, but it must hold the locks granted while it sits out, or it would hand
-- them out again when it rejoins. It draws no fence (0): its vote does not count, and a
-- counter it created now would survive its re-seeding below the floor.
-- A counter that starts here also starts at the round's floor (ARGV[5], absent or 0: none) when
-- that is higher: the server's wall clock in microseconds, rising with every round it sends. A
-- round that asked a quorum only (thrifty rounds) then finds the same first fence on each of its
-- nodes, although each saw only its share of the other resources' grants (their fence-max
-- differ), and raises none. A floor only ever raises a fence.
-- KEYS: lock, incarnation, counter, fence-max   ARGV: token, ttl-ms, owner, round id[, floor]
local incarnated = redis.call('EXISTS', KEYS[2])
local now = redis.call('TIME')
local owner = ARGV[3] == '' and '' or '\n' .. ARGV[3]
local value = redis.call('GET', KEYS[1])
if value then
  -- A value in any other shape (an older server's) is someone's lock, never refreshed here.
  local token, fence, rounds = string.match(value, '^(%S+) (%d+) ([^\n]+)')
  if token ~= ARGV[1] then
    return {0, 0, incarnated, now[1], now[2]}
  end
  local ids = {}
  for id in string.gmatch(rounds, '%S+') do
    ids[#ids + 1] = id
  end
  ids[#ids + 1] = ARGV[4]
  redis.call('SET', KEYS[1], token .. ' ' .. fence .. ' ' .. table.concat(ids, ' ', math.max(1, #ids - 3)) .. owner,
    'PX', ARGV[2])
  -- The fence goes back as text: a Lua number would lose digits past 2^53.
  return {2, fence, incarnated, now[1], now[2]}
end
local fence = '0'
if incarnated == 1 then
  local last = redis.call('GET', KEYS[3])
  local max = tonumber(redis.call('GET', KEYS[4]) or '0')
  -- string.format: a Lua number concatenated or passed as is would be rounded to 14 digits.
  if last then
    fence = string.format('%d', tonumber(last) + 1)
  else
    fence = string.format('%d', math.max(max + 1, tonumber(ARGV[5] or '0')))
  end
  redis.call('SET', KEYS[3], fence, 'PX', ARGV[2])
  if tonumber(fence) > max then
    redis.call('SET', KEYS[4], fence)
  end
end
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. fence .. ' ' .. ARGV[4] .. owner, 'PX', ARGV[2])
return {1, fence, incarnated, now[1], now[2]}
