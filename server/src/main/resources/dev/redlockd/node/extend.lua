-- Compare-and-pexpire for one or many leases in one call (kept leases due together are
-- renewed by one call per node, not one per lease).
-- The owner key (see acquire.lua) gets the same ttl as its lock, so the two run out together.
-- Returns {incarnated, held1, fence1, held2, fence2, ...}.
-- KEYS: incarnation, lock1, fence1, owner1, lock2, fence2, owner2, ...
-- ARGV: token1, ttl1-ms, token2, ttl2-ms, ...
local reply = {redis.call('EXISTS', KEYS[1])}
for i = 1, #ARGV / 2 do
  local lock, fence, owner = KEYS[3 * i - 1], KEYS[3 * i], KEYS[3 * i + 1]
  local value = redis.call('GET', lock)
  local token = ARGV[2 * i - 1]
  -- The value is the token, then a space and round ids (see acquire.lua), or the token alone.
  if value == token or (value and string.sub(value, 1, #token + 1) == token .. ' ') then
    redis.call('PEXPIRE', lock, ARGV[2 * i])
    redis.call('PEXPIRE', owner, ARGV[2 * i])
    reply[2 * i] = 1
    reply[2 * i + 1] = tonumber(redis.call('GET', fence) or '0')
  else
    reply[2 * i] = 0
    reply[2 * i + 1] = 0
  end
end
return reply
