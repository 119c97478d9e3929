-- Puts a lease back on a node that does not hold it, for a thrifty renewal that found fewer than
-- a quorum of nodes still holding it (the engine counts this node's yes only while the lease's
-- last validity has not run out, so no other lease of the resource can have been granted
-- since). Writes the lease only where the lock is free and the resource's counter here is not
-- above the lease's fence (a later grant this node took part in: never taken back), and raises
-- the counter and the node's fence-max to the fence where lower, so that every later grant
-- through this node draws above it (see acquire.lua). A node without its incarnation key writes
-- the lease (it must hold what was granted while it sits out) but draws nothing and does not
-- vote. Returns {outcome, incarnated, seconds, microseconds}: outcome 1 = written, 2 = this
-- token holds it already (its expiry pushed), 0 = refused; then the node's TIME, for the clock watch.
-- KEYS: lock, incarnation, counter, fence-max   ARGV: token, fence, ttl-ms
local incarnated = redis.call('EXISTS', KEYS[2])
local now = redis.call('TIME')
local value = redis.call('GET', KEYS[1])
if value then
  if string.match(value, '^(%S+) ') == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return {2, incarnated, now[1], now[2]}
  end
  return {0, incarnated, now[1], now[2]}
end
local fence = tonumber(ARGV[2])
if tonumber(redis.call('GET', KEYS[3]) or '0') > fence then
  return {0, incarnated, now[1], now[2]}
end
-- 'restored' stands where acquire.lua keeps round ids: no failed round's clean-up names it.
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[2] .. ' restored', 'PX', ARGV[3])
if incarnated == 1 then
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
  if tonumber(redis.call('GET', KEYS[4]) or '0') < fence then
    redis.call('SET', KEYS[4], ARGV[2])
  end
end
return {1, incarnated, now[1], now[2]}
