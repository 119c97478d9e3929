-- Deletes a resource's lock and owner text whatever the token (ForceRelease). The fencing
-- counter stays, so the next grant's fence is still above the released one.
-- Returns {deleted, incarnated}.
-- KEYS: lock, owner, incarnation
local incarnated = redis.call('EXISTS', KEYS[3])
local deleted = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2])
return {deleted, incarnated}
