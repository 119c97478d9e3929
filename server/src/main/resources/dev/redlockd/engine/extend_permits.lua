-- extend.lua for permits: compare-and-pexpire of each permit, and the semaphore's limit key
-- pushed out with it (never in), so that the limit outlives every permit held on this node
-- (see acquire_permit.lua). A limit key that is gone is not made again here: the permit's N is
-- not known, and the limit key is never shorter-lived than a permit it guards.
-- Returns {incarnated, seconds, microseconds, held1, fence1, held2, fence2, ...} as extend.lua does.
-- KEYS: incarnation, permit1, limit1, permit2, limit2, ...   ARGV: token1, ttl1-ms, token2, ttl2-ms, ...
local now = redis.call('TIME')
local reply = {redis.call('EXISTS', KEYS[1]), now[1], now[2]}
for i = 1, #ARGV / 2 do
  local permit = KEYS[2 * i]
  local limit = KEYS[2 * i + 1]
  local token, fence = string.match(redis.call('GET', permit) or '', '^(%S+) (%d+) ')
  if token == ARGV[2 * i - 1] then
    redis.call('PEXPIRE', permit, ARGV[2 * i])
    local left = redis.call('PTTL', limit)
    if left ~= -2 and left ~= -1 and left < tonumber(ARGV[2 * i]) then
      redis.call('PEXPIRE', limit, ARGV[2 * i])
    end
    reply[2 * i + 2] = 1
    reply[2 * i + 3] = fence
  else
    reply[2 * i + 2] = 0
    reply[2 * i + 3] = 0
  end
end
return reply
