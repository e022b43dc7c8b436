-- leader: acquire or renew the orchestrator leader lease.
--
-- KEYS[1] leader STRING  sett:<i>:orchestrator:leader
-- KEYS[2] epoch STRING   sett:<i>:orchestrator:epoch
-- KEYS[3] events STREAM  sett:<i>:events (leader_elected is appended here)
-- ARGV[1] candidate id (unique per orchestrator process)
-- ARGV[2] lease TTL in milliseconds; 0 resigns (releases a lease we hold)
--
-- Returns {'OK', epoch, 'acquired'|'renewed'} when the caller leads,
-- {'HELD', holder} when another orchestrator leads, {'OK', '0', 'resigned'}
-- after a resignation.
--
-- Every acquisition increments the epoch in the same atomic step, so the
-- epoch a leader writes with is refused as soon as anyone else leads; the
-- leader_elected event is appended in the same step, so it is never
-- missing nor duplicated.

local holder = redis.call('GET', KEYS[1])
if tonumber(ARGV[2]) == 0 then
  if holder == ARGV[1] then
    redis.call('DEL', KEYS[1])
  end
  return {'OK', '0', 'resigned'}
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'OK', redis.call('GET', KEYS[2]) or '0', 'renewed'}
end
if holder ~= false then
  return {'HELD', holder}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local epoch = tostring(redis.call('INCR', KEYS[2]))
emit(KEYS[3], nil, 'leader_elected', now_ms(), {'epoch', epoch, 'orchestrator', ARGV[1]})
return {'OK', epoch, 'acquired'}
