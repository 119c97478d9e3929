-- Lets a node vote again (after its quarantine, or when the whole cluster is new): raises
-- its fence-max to the floor, so the counters it lost restart above every fence already
-- granted (see acquire.lua), then writes the incarnation key. Returns 1 when seeded, 0 when
-- already seeded, -1 while the quarantine still runs.
-- KEYS: incarnation, quarantined-since, quarantine, fence-max   ARGV: incarnation-id, floor
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return -1
end
if tonumber(ARGV[2]) > tonumber(redis.call('GET', KEYS[4]) or '0') then
  redis.call('SET', KEYS[4], ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1
