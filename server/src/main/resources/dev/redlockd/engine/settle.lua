-- Brings the fence stored with a lease down to the one it was granted with, on a node that took
-- the lock in the granting round but answered after the quorum that decided it, with a fence it
-- drew from a higher floor of its own: renewals then report the grant's fence, not one that no
-- grant gave. Only the lease's stored fence moves; the resource's counter and the node's
-- fence-max stay where they are, so every later grant still draws above both. Only while the
-- token holds the lock here, and only downwards. Returns 1 when it lowered it.
-- KEYS: lock   ARGV: token, fence
-- The lock's value: '<token> <fence> <round ids>' and the owner text after a newline.
local value = redis.call('GET', KEYS[1])
local token, fence, rest = string.match(value or '', '^(%S+) (%d+)( .*)$')
if token ~= ARGV[1] or tonumber(fence) <= tonumber(ARGV[2]) then
  return 0
end
redis.call('SET', KEYS[1], token .. ' ' .. ARGV[2] .. rest, 'KEEPTTL')
return 1
