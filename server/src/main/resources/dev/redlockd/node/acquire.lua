-- Takes the lock when it is free, or refreshes it for the same token, and returns
-- {outcome, fence, incarnated}: outcome 1 = taken, 2 = refreshed, 0 = held by another.
-- The lock is written even on a node without its incarnation key (restarted empty):
-- such a node must not vote, but it must hold the locks granted while it sits out, or it
-- would hand them out again when it rejoins.
-- The owner text (for Describe) lives in its own key beside the lock, with the same ttl, so
-- the lock key holds only what the compare-and-* scripts check: the token and round ids.
-- The lock's value is the token, then the ids of the acquire rounds that wrote it, newest last
-- (at most 4), separated by spaces: a failed round's clean-up (abandon.lua) then takes back its
-- own write only, never a lease that a later round of the same token was granted on this node.
-- KEYS: lock, fence, incarnation, floor, fence-max, owner   ARGV: token, ttl-ms, owner, round id
local function setOwner()
  if ARGV[3] == '' then
    redis.call('DEL', KEYS[6])
  else
    redis.call('SET', KEYS[6], ARGV[3], 'PX', ARGV[2])
  end
end
local incarnated = redis.call('EXISTS', KEYS[3])
local value = redis.call('GET', KEYS[1])
if value then
  local space = string.find(value, ' ', 1, true)
  if (space and string.sub(value, 1, space - 1) or value) ~= ARGV[1] then
    return {0, 0, incarnated}
  end
  local rounds = {}
  if space then
    for id in string.gmatch(string.sub(value, space + 1), '%S+') do
      rounds[#rounds + 1] = id
    end
  end
  rounds[#rounds + 1] = ARGV[4]
  redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. table.concat(rounds, ' ', math.max(1, #rounds - 3)), 'PX', ARGV[2])
  setOwner()
  return {2, tonumber(redis.call('GET', KEYS[2]) or '0'), incarnated}
end
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[4], 'PX', ARGV[2])
setOwner()
local fence = redis.call('INCR', KEYS[2])
-- The floor is set when a node (re)joins: counters lost with its data restart above it.
local floor = tonumber(redis.call('GET', KEYS[4]) or '0')
if fence <= floor then
  fence = floor + 1
  -- string.format: a Lua number passed as is would be rounded to 14 digits.
  redis.call('SET', KEYS[2], string.format('%d', fence))
end
if fence > tonumber(redis.call('GET', KEYS[5]) or '0') then
  redis.call('SET', KEYS[5], string.format('%d', fence))
end
return {1, fence, incarnated}
