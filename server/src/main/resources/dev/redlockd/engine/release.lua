-- Compare-and-delete: the lock's value starts with the token and a space (see acquire.lua).
-- A deleted lock is announced on the resource's channel, so that servers with callers waiting
-- for it try again at once; the notice names the release so that they can tell its copies
-- from the other nodes apart from a new release. Returns {deleted, incarnated}.
-- KEYS: lock, incarnation   ARGV: token, channel, notice
local incarnated = redis.call('EXISTS', KEYS[2])
local value = redis.call('GET', KEYS[1])
if value and string.sub(value, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then
  redis.call('DEL', KEYS[1])
  -- pcall: a node whose ACL denies the channel still releases; waiters then find out by retrying.
  redis.pcall('PUBLISH', ARGV[2], ARGV[3])
  return {1, incarnated}
end
return {0, incarnated}
