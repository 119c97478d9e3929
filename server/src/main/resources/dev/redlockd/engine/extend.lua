-- Compare-and-pexpire for one or many leases in one call (kept leases due together are
-- renewed by one call per node, not one per lease).
-- Returns {incarnated, seconds, microseconds, held1, fence1, held2, fence2, ...}: the node's
-- TIME for the engine's clock watch (see acquire.lua), then each fence as the lease's own (see
-- acquire.lua), as text.
-- KEYS: incarnation, lock1, lock2, ...   ARGV: token1, ttl1-ms, token2, ttl2-ms, ...
local now = redis.call('TIME')
local reply = {redis.call('EXISTS', KEYS[1]), now[1], now[2]}
for i = 1, #ARGV / 2 do
  local lock = KEYS[i + 1]
  local token, fence = string.match(redis.call('GET', lock) or '', '^(%S+) (%d+) ')
  if token == ARGV[2 * i - 1] then
    redis.call('PEXPIRE', lock, ARGV[2 * i])
    reply[2 * i + 2] = 1
    reply[2 * i + 3] = fence
  else
    reply[2 * i + 2] = 0
    reply[2 * i + 3] = 0
  end
end
return reply
