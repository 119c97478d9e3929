-- Compare-and-delete: the lock's value starts with the token and a space (see acquire.lua).
-- Returns {deleted, incarnated}.
-- KEYS: lock, incarnation   ARGV: token
local incarnated = redis.call('EXISTS', KEYS[2])
local value = redis.call('GET', KEYS[1])
if value and string.sub(value, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then
  redis.call('DEL', KEYS[1])
  return {1, incarnated}
end
return {0, incarnated}
