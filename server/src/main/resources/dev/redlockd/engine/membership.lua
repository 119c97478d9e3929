-- Records on this node which node list(s) a replica runs, for a membership change (see
-- MembershipRecords): one sorted set whose members are the records ("alone:<ids>" or
-- "joint:<old ids>|<new ids>") and whose scores are when each expires, in milliseconds of this
-- node's own clock. Drops the expired ones, writes (or pushes out) the caller's record, keeps
-- the set alive as long as its longest record, and returns every live record with the
-- milliseconds it has left: {record, ms, record, ms, ...}.
-- KEYS: records   ARGV: record, ttl-ms
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
local current = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not current or tonumber(current) < ms + ttl then
  redis.call('ZADD', KEYS[1], ms + ttl, ARGV[1])
end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], math.max(ttl, tonumber(last[2]) - ms))
local records = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local out = {}
for i = 1, #records, 2 do
  out[#out + 1] = records[i]
  out[#out + 1] = tonumber(records[i + 1]) - ms
end
return out
