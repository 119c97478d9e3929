-- Compare-and-pexpire for one or many leases in one call (kept leases due together are
-- renewed by one call per node, not one per lease).
-- Returns {incarnated, held1, fence1, held2, fence2, ...}, each fence as the lease's own
-- (see acquire.lua), as text.
-- KEYS: incarnation, lock1, lock2, ...   ARGV: token1, ttl1-ms, token2, ttl2-ms, ...
local reply = {redis.call('EXISTS', KEYS[1])}
for i = 1, #ARGV / 2 do
  local lock = KEYS[i + 1]
  local token, fence = string.match(redis.call('GET', lock) or '', '^(%S+) (%d+) ')
  if token == ARGV[2 * i - 1] then
    redis.call('PEXPIRE', lock, ARGV[2 * i])
    reply[2 * i] = 1
    reply[2 * i + 1] = fence
  else
    reply[2 * i] = 0
    reply[2 * i + 1] = 0
  end
end
return reply
