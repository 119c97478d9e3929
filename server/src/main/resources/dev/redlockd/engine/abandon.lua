-- The clean-up of a failed acquire round: takes its id out of the lock's list of rounds (see
-- acquire.lua), and deletes the lock only when no other round of the token wrote it. A round
-- of the same token that was granted meanwhile keeps its lease here, even when this clean-up
-- arrives late. Returns {deleted, incarnated}.
-- KEYS: lock, incarnation (as release.lua)   ARGV: token, round id
local incarnated = redis.call('EXISTS', KEYS[2])
local token, fence, rounds, owner = string.match(redis.call('GET', KEYS[1]) or '', '^(%S+) (%d+) ([^\n]+)(.*)$')
if token ~= ARGV[1] then
  return {0, incarnated}
end
local others = {}
local mine = false
for id in string.gmatch(rounds, '%S+') do
  if id == ARGV[2] then
    mine = true
  else
    others[#others + 1] = id
  end
end
if not mine then
  return {0, incarnated}
end
if #others == 0 then
  redis.call('DEL', KEYS[1])
  return {1, incarnated}
end
redis.call('SET', KEYS[1], token .. ' ' .. fence .. ' ' .. table.concat(others, ' ') .. owner, 'KEEPTTL')
return {0, incarnated}
