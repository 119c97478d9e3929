-- Raises this node's fencing counter to the fence the engine is about to grant, but only
-- while the token still holds the lock here (a late raise must not touch a later lease).
-- Returns 1 when the counter is now at least the target, 0 when the token does not hold.
-- KEYS: lock, fence, fence-max   ARGV: token, target
-- The lock's value is the token, then a space and round ids (see acquire.lua), or the token alone.
local value = redis.call('GET', KEYS[1])
if value ~= ARGV[1] and not (value and string.sub(value, 1, #ARGV[1] + 1) == ARGV[1] .. ' ') then
  return 0
end
local target = tonumber(ARGV[2])
if tonumber(redis.call('GET', KEYS[2]) or '0') < target then
  redis.call('SET', KEYS[2], ARGV[2])
end
if tonumber(redis.call('GET', KEYS[3]) or '0') < target then
  redis.call('SET', KEYS[3], ARGV[2])
end
return 1
