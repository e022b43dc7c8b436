-- pop_timers: take the timers that are due by the Redis clock.
--
-- KEYS[1] timers ZSET    sett:<i>:timers
-- KEYS[2] epoch STRING   sett:<i>:orchestrator:epoch
-- ARGV[1] leader epoch of the caller (required)
-- ARGV[2] at most this many timers
-- ARGV[3] visibility timeout in milliseconds
--
-- Returns {'OK', now_ms, next_due_ms_or_-1, visible_again_ms, member...}
-- or {'FENCED', epoch} or {'NO_EPOCH', why}.
--
-- Due members are not removed but hidden: their score moves to now plus
-- the visibility timeout, so two callers never both fire one timer, and a
-- caller that dies before storing the timer's effect leaves it to fire
-- again (ack_timer removes it once the effect is stored).

local denied = refuse_unless(KEYS[1], 'lead')
if denied then
  return denied
end
local refusal = epoch_refusal(KEYS[2], ARGV[1])
if refusal then
  return refusal
end
local now = now_ms()
local again = now + tonumber(ARGV[3])
local due = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[2]))
for _, m in ipairs(due) do
  redis.call('ZADD', KEYS[1], again, m)
end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local out = {'OK', tostring(now), '-1', tostring(again)}
if #nxt > 0 then
  out[3] = nxt[2]
end
for _, m in ipairs(due) do
  out[#out + 1] = m
end
return out
