-- Compare-and-delete. Returns {deleted, incarnated}.
-- KEYS: lock, incarnation   ARGV: token
local incarnated = redis.call('EXISTS', KEYS[2])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return {1, incarnated}
end
return {0, incarnated}
