-- extend_lease: renew (or, with TTL 0, release) a work lease the caller
-- still holds.
--
-- KEYS[1] lease STRING  sett:<i>:lease:<claim>:<agent>
-- ARGV[1] value the lease must hold: "<grant token>|<holder>"
-- ARGV[2] new TTL in milliseconds; 0 deletes the lease
--
-- Returns 1 when the lease was held under ARGV[1] (and is now renewed or
-- released), 0 when it had expired or belongs to another attempt or
-- replica.

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if tonumber(ARGV[2]) == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
