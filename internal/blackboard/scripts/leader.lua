-- leader: acquire or renew the orchestrator leader lease.
--
-- KEYS[1] leader STRING  sett:<i>:orchestrator:leader
-- KEYS[2] epoch STRING   sett:<i>:orchestrator:epoch
-- KEYS[3] events STREAM  sett:<i>:events (leader_elected is appended here)
-- ARGV[1] candidate id (unique per orchestrator process)
-- ARGV[2] lease TTL in milliseconds; 0 resigns (releases a lease we hold)
-- ARGV[3] optional: the caller's stable identity. When the lease is held
--         by "<identity>#<anything else>" — an earlier boot of the same
--         orchestrator, which the caller has proved dead — the caller
--         takes it over at once instead of waiting for it to expire.
--
-- Returns {'OK', epoch, 'acquired'|'renewed'|'reclaimed'} when the caller
-- leads,
-- {'HELD', holder} when another orchestrator leads, {'OK', '0', 'resigned'}
-- after a resignation.
--
-- Every acquisition increments the epoch in the same atomic step, so the
-- epoch a leader writes with is refused as soon as anyone else leads; the
-- leader_elected event is appended in the same step, so it is never
-- missing nor duplicated.

local denied = refuse_unless(KEYS[1], 'lead')
if denied then
  return denied
end
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
local how = 'acquired'
if holder ~= false then
  local prefix = (ARGV[3] or '') .. '#'
  if prefix == '#' or string.sub(holder, 1, #prefix) ~= prefix then
    return {'HELD', holder}
  end
  -- A reclaim is an acquisition like any other: a new epoch fences every
  -- late write of the earlier boot.
  how = 'reclaimed'
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local epoch = tostring(redis.call('INCR', KEYS[2]))
-- The election is announced in the same step that takes the lease.
-- orchestrator is the stable identity (the candidate id up to its '#',
-- or all of it), holder the candidate id <identity>#<boot>.
local name = string.match(ARGV[1], '^(.*)#') or ARGV[1]
local reclaimed = ''
if how == 'reclaimed' then
  reclaimed = 'true'
end
emit(KEYS[3], nil, 'leader_elected', now_ms(), {'epoch', epoch, 'orchestrator', name, 'holder', ARGV[1],
  'reclaimed', reclaimed})
return {'OK', epoch, how}
