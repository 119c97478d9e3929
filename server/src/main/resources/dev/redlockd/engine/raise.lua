-- Raises the fence of a lease this node holds to the fence the engine is about to grant (and
-- the resource's counter and the node's fence-max with it, see acquire.lua), but only while
-- the token still holds the lock here: a late raise must not touch a later lease. Returns 1
-- when the lease's fence is now at least the target, 0 when the token does not hold.
-- KEYS: lock, counter, fence-max   ARGV: token, target, ttl-ms (for a counter that must be made)
-- The lock's value: '<token> <fence> <round ids>' and the owner text after a newline.
local value = redis.call('GET', KEYS[1])
local token, fence, rest = string.match(value or '', '^(%S+) (%d+)( .*)$')
if token ~= ARGV[1] then
  return 0
end
local target = tonumber(ARGV[2])
if tonumber(fence) < target then
  redis.call('SET', KEYS[1], token .. ' ' .. ARGV[2] .. rest, 'KEEPTTL')
end
if tonumber(redis.call('GET', KEYS[2]) or '0') < target then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
if tonumber(redis.call('GET', KEYS[3]) or '0') < target then
  redis.call('SET', KEYS[3], ARGV[2])
end
return 1
