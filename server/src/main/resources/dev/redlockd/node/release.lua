-- Compare-and-delete, of the lock and its owner text. Returns {deleted, incarnated}.
-- KEYS: lock, incarnation, owner   ARGV: token
local incarnated = redis.call('EXISTS', KEYS[2])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1], KEYS[3])
  return {1, incarnated}
end
return {0, incarnated}
