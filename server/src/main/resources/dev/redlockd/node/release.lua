-- Compare-and-delete, of the lock and its owner text: the lock's value is the token followed by
-- a space and round ids (see acquire.lua), or the token alone as servers before round ids
-- wrote it. Returns {deleted, incarnated}.
-- KEYS: lock, incarnation, owner   ARGV: token
local incarnated = redis.call('EXISTS', KEYS[2])
local value = redis.call('GET', KEYS[1])
if value == ARGV[1] or (value and string.sub(value, 1, #ARGV[1] + 1) == ARGV[1] .. ' ') then
  redis.call('DEL', KEYS[1], KEYS[3])
  return {1, incarnated}
end
return {0, incarnated}
