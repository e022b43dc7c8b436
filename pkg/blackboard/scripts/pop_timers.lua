-- pop_timers: take the timers that are due by the Redis clock.
--
-- KEYS[1] timers ZSET    sett:<i>:timers
-- KEYS[2] epoch STRING   sett:<i>:orchestrator:epoch
-- ARGV[1] leader epoch of the caller
-- ARGV[2] at most this many timers
--
-- Returns {'OK', now_ms, next_due_ms_or_-1, member...} or {'FENCED', epoch}.
--
-- Due members are removed in the same step that returns them, so two
-- callers never both fire one timer; a caller that fails to handle a timer
-- re-arms it, and the start-up reconcile covers a caller that crashed.

if fenced(KEYS[2], ARGV[1]) then
  return {'FENCED', redis.call('GET', KEYS[2])}
end
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
if #due > 0 then
  redis.call('ZREM', KEYS[1], unpack(due))
end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local out = {'OK', tostring(now), '-1'}
if #nxt > 0 then
  out[3] = nxt[2]
end
for _, m in ipairs(due) do
  out[#out + 1] = m
end
return out
