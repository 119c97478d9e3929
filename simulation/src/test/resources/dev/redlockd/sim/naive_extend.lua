-- The MUTANT's renewal: pushes the holder's expiry out if it still holds here.
-- KEYS: holder   ARGV: token, ttl-ms
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
