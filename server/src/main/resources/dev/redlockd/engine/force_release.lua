-- Deletes a resource's lock whatever the token (ForceRelease). The node's fencing counter
-- stays, so the next grant's fence is still above the released one.
-- Returns {deleted, incarnated}.
-- KEYS: lock, incarnation
local incarnated = redis.call('EXISTS', KEYS[2])
return {redis.call('DEL', KEYS[1]), incarnated}
