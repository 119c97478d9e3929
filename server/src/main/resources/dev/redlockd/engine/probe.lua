-- Reports whether this node may vote, starts its quarantine when it has lost its data, and
-- answers what the engine's clock watch needs.
-- Returns {state, quarantine-ms-left, fence-max, seconds, microseconds, why, id, clocks} with
-- state one of
--   'up'           the incarnation key is here: the node votes;
--   'quarantined'  it lost its data, or its clock stepped, and sits out until every lock
--                  granted before has expired;
--   'served'       its quarantine is over: the engine raises its fence-max to the floor and rejoins it;
--   'blank'        no key of ours at all, reported as is when ARGV[2] is 'peek' (the engine
--                  is still deciding whether the whole cluster is new).
-- The quarantine lives on the node itself, so every server replica sees the same one, and a
-- second data loss during it starts it over. Then the node's TIME; why the node is (or was
-- last) quarantined, '' if never ('1': it lost its data; 'clock <signed ms>': its clock
-- stepped, see quarantine.lua); the node's id, made here from ARGV[3] the first time; and the
-- clocks of every node as a replica last recorded them here ('' if none), with which a replica
-- that has no history of this node checks it (ClockRecords).
-- KEYS: incarnation, quarantine, quarantined-since, fence-max, id, clocks
-- ARGV: quarantine-ms, mode, id for a node that has none
-- fence-max goes back with every answer: it is at least every fence granted on this node,
-- which is what a rejoining node's counters must restart above.
local now = redis.call('TIME')
local fenceMax = tonumber(redis.call('GET', KEYS[4]) or '0')
-- Written once: a node that refuses writes (maxmemory reached) still answers every later probe.
local id = redis.call('GET', KEYS[5])
if not id then
  id = ARGV[3]
  redis.call('SET', KEYS[5], id)
end
local function answer(state, left)
  return {state, left, fenceMax, now[1], now[2], redis.call('GET', KEYS[2]) or '', id, redis.call('GET', KEYS[6]) or ''}
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return answer('up', 0)
end
local left = redis.call('PTTL', KEYS[2])
if left > 0 then
  return answer('quarantined', left)
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return answer('served', 0)
end
if ARGV[2] == 'peek' then
  return answer('blank', 0)
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
redis.call('SET', KEYS[3], '1')
return answer('quarantined', tonumber(ARGV[1]))
