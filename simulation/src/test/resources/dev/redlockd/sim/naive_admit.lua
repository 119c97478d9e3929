-- The MUTANT's admission (NaiveSemaphore, tests only): this node counts the semaphore's live
-- holders and admits the token when fewer than the limit hold it here. Each holder is its own
-- key (expiring with the permit's ttl); the index lists the tokens that may still be live.
-- Returns 1 when the token holds here now (admitted or refreshed), 0 when the node is full.
-- KEYS: index   ARGV: token, ttl-ms, limit, holder key prefix
local live = {}
local mine = false
local index = redis.call('GET', KEYS[1])
if index then
  for t in string.gmatch(index, '%S+') do
    if redis.call('EXISTS', ARGV[4] .. t) == 1 then
      live[#live + 1] = t
      if t == ARGV[1] then
        mine = true
      end
    end
  end
end
if not mine then
  if #live >= tonumber(ARGV[3]) then
    redis.call('SET', KEYS[1], table.concat(live, ' '))
    return 0
  end
  live[#live + 1] = ARGV[1]
end
redis.call('SET', ARGV[4] .. ARGV[1], '1', 'PX', ARGV[2])
redis.call('SET', KEYS[1], table.concat(live, ' '))
return 1
