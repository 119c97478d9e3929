-- Lets a node vote again (after its quarantine, or when the whole cluster is new): raises
-- its fencing floor, so counters it lost restart above every fence already granted, then
-- writes the incarnation key. Returns 1 when seeded, 0 when already seeded, -1 while the
-- quarantine still runs.
-- The node-wide fence-max is raised with the floor, so that probes of this node report a
-- floor that a later rejoining node must start above.
-- KEYS: incarnation, floor, quarantined-since, quarantine, fence-max   ARGV: incarnation-id, floor
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
if redis.call('EXISTS', KEYS[4]) == 1 then
  return -1
end
if tonumber(ARGV[2]) > tonumber(redis.call('GET', KEYS[2]) or '0') then
  redis.call('SET', KEYS[2], ARGV[2])
end
if tonumber(ARGV[2]) > tonumber(redis.call('GET', KEYS[5]) or '0') then
  redis.call('SET', KEYS[5], ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[3])
return 1
