-- Compare-and-pexpire. Returns {held, fence, incarnated}.
-- KEYS: lock, fence, incarnation   ARGV: token, ttl-ms
local incarnated = redis.call('EXISTS', KEYS[3])
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {0, 0, incarnated}
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, tonumber(redis.call('GET', KEYS[2]) or '0'), incarnated}
