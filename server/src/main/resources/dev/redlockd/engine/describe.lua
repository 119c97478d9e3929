-- Reads one resource's lock for Describe; writes nothing. The holder is named by the SHA1 of
-- its token, so the engine can tell which nodes hold the same lease without the token ever
-- leaving Redis.
-- Returns {holder-sha1 or '', pttl-ms, owner or '', fence, incarnated}.
-- KEYS: lock, incarnation
local incarnated = redis.call('EXISTS', KEYS[2])
local value = redis.call('GET', KEYS[1])
if not value then
  return {'', 0, '', 0, incarnated}
end
-- '<token> <fence> <round ids>', then the owner text after a newline (see acquire.lua). A value
-- in an older server's shape still names its holder; its fence reads as 0.
local token = string.match(value, '^%S*')
local fence = string.match(value, '^%S+ (%d+) ') or '0'
local owner = string.match(value, '\n(.*)$') or ''
-- The fence goes back as text: a Lua number would lose digits past 2^53.
return {redis.sha1hex(token), redis.call('PTTL', KEYS[1]), owner, fence, incarnated}
