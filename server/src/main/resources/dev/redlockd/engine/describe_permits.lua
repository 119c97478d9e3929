-- describe.lua for every permit of a semaphore at once; writes nothing. Each holder is named by
-- the SHA1 of its token, never the token.
-- Returns {incarnated, limit or '', holder1, pttl1, owner1, fence1, holder2, ...} for permits 1..N
-- as asked (describe.lua's fields for each).
-- KEYS: incarnation, limit, permit 1 .. permit N
local reply = {redis.call('EXISTS', KEYS[1]), redis.call('GET', KEYS[2]) or ''}
for i = 3, #KEYS do
  local value = redis.call('GET', KEYS[i])
  if value then
    local token = string.match(value, '^%S*')
    reply[#reply + 1] = redis.sha1hex(token)
    reply[#reply + 1] = redis.call('PTTL', KEYS[i])
    reply[#reply + 1] = string.match(value, '\n(.*)$') or ''
    reply[#reply + 1] = string.match(value, '^%S+ (%d+) ') or '0'
  else
    reply[#reply + 1] = ''
    reply[#reply + 1] = 0
    reply[#reply + 1] = ''
    reply[#reply + 1] = '0'
  end
end
return reply
