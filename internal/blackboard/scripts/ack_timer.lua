-- ack_timer: remove a fired timer once its effect is stored.
--
-- KEYS[1] timers ZSET    sett:<i>:timers
-- KEYS[2] epoch STRING   sett:<i>:orchestrator:epoch
-- ARGV[1] leader epoch of the caller (required)
-- ARGV[2] claim id (the member)
-- ARGV[3] the score pop_timers hid it under (visible_again_ms)
--
-- Returns {'OK', '1'} when removed, {'OK', '0'} when the timer was re-armed
-- meanwhile (its score changed: it must fire at the new time) or is gone,
-- or {'FENCED', epoch} or {'NO_EPOCH', why}.

local denied = refuse_unless(KEYS[1], 'lead')
if denied then
  return denied
end
local refusal = epoch_refusal(KEYS[2], ARGV[1])
if refusal then
  return refusal
end
local score = redis.call('ZSCORE', KEYS[1], ARGV[2])
if score ~= false and tonumber(score) == tonumber(ARGV[3]) then
  redis.call('ZREM', KEYS[1], ARGV[2])
  return {'OK', '1'}
end
return {'OK', '0'}
