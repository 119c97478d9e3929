-- Reads one resource's lock for Describe; writes nothing. The holder is named by the SHA1 of
-- its token, so the engine can tell which nodes hold the same lease without the token ever
-- leaving Redis.
-- Returns {holder-sha1 or '', pttl-ms, owner or '', fence, incarnated}.
-- KEYS: lock, fence, owner, incarnation
local incarnated = redis.call('EXISTS', KEYS[4])
local holder = redis.call('GET', KEYS[1])
if not holder then
  return {'', 0, '', 0, incarnated}
end
-- The value is the token, then round ids that differ from node to node (see acquire.lua).
holder = string.match(holder, '^%S*')
-- The fence goes back as text: a Lua number would lose digits past 2^53.
return {redis.sha1hex(holder), redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[3]) or '',
  redis.call('GET', KEYS[2]) or '0', incarnated}
