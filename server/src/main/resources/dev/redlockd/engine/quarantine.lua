-- Quarantines this node because its wall clock stepped (the engine's clock watch saw it): Redis
-- expires keys by that clock, so a step forward may have freed locks here early, and a step
-- back may hide a later step forward from a replica that watched neither. The incarnation key
-- goes, so no replica counts this node's votes from now on (every lock script checks it); the
-- quarantine then runs as after a restart without data (probe.lua, seed.lua), for as long as a
-- lease granted before may still be relied on, and starts over if one is running. Why is kept
-- in the quarantine key, so that every replica can say. Returns 1.
-- KEYS: incarnation, quarantine, quarantined-since   ARGV: quarantine-ms, why ('clock <signed ms>')
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[1])
redis.call('SET', KEYS[3], '1')
return 1
