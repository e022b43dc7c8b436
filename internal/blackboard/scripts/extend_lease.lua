-- extend_lease: renew (or, with TTL 0, release) a work lease the caller
-- still holds.
--
-- KEYS[1] lease STRING     sett:<i>:lease:<claim>:<agent>
-- KEYS[2] (optional) hand-back STRING  sett:<i>:lease:<claim>:handback:<agent>
-- ARGV[1] value the lease must hold: "<grant token>|<holder>"
-- ARGV[2] new TTL in milliseconds; 0 deletes the lease
-- ARGV[3] (with KEYS[2]) how long the hand-back mark lives, milliseconds
--
-- Returns 1 when the lease was held under ARGV[1] (and is now renewed or
-- released), 0 when it had expired or belongs to another attempt or
-- replica. A release with KEYS[2] also leaves the hand-back mark (the
-- grant token): the holder gives the grant back unfinished, on purpose,
-- and the orchestrator grants it again without counting an attempt. A
-- lease already lost leaves no mark: that grant is lost, not given back.

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if tonumber(ARGV[2]) == 0 then
  redis.call('DEL', KEYS[1])
  if KEYS[2] then
    local sep = string.find(ARGV[1], '|', 1, true)
    redis.call('SET', KEYS[2], string.sub(ARGV[1], 1, sep - 1), 'PX', ARGV[3])
  end
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
