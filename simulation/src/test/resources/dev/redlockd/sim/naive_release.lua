-- The MUTANT's release: the holder stops counting here (the index drops it on the next admission).
-- KEYS: holder   ARGV: token
return redis.call('DEL', KEYS[1])
