-- Reports whether this node may vote, and starts its quarantine when it has lost its data.
-- Returns {state, quarantine-ms-left, fence-max} with state one of
--   'up'           the incarnation key is here: the node votes;
--   'quarantined'  it lost its data and sits out until every lock it held has expired;
--   'served'       its quarantine is over: the engine raises its fence-max to the floor and rejoins it;
--   'blank'        no key of ours at all, reported as is when ARGV[2] is 'peek' (the engine
--                  is still deciding whether the whole cluster is new).
-- The quarantine lives on the node itself, so every server replica sees the same one, and a
-- second data loss during it starts it over.
-- KEYS: incarnation, quarantine, quarantined-since, fence-max   ARGV: quarantine-ms, mode
-- fence-max goes back with every answer: it is at least every fence granted on this node,
-- which is what a rejoining node's counters must restart above.
local fenceMax = tonumber(redis.call('GET', KEYS[4]) or '0')
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'up', 0, fenceMax}
end
local left = redis.call('PTTL', KEYS[2])
if left > 0 then
  return {'quarantined', left, fenceMax}
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return {'served', 0, fenceMax}
end
if ARGV[2] == 'peek' then
  return {'blank', 0, fenceMax}
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
redis.call('SET', KEYS[3], '1')
return {'quarantined', tonumber(ARGV[1]), fenceMax}
