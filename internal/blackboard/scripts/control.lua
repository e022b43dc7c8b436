-- control: pause or resume the instance.
--
-- KEYS[1] control HASH        sett:<i>:control
-- KEYS[2] events STREAM       sett:<i>:events
-- KEYS[3] orchestrator queue STREAM sett:<i>:orchestrator:queue
--
-- ARGV[1] 'pause' or 'resume'
-- ARGV[2] by (who)
-- ARGV[3] reason (pause only)
-- ARGV[4] pub/sub channel for the event
-- ARGV[5] source: 'cli' or 'stop_file' — a resume from the stop file
--         only lifts a pause the stop file made, never a person's pause
--
-- Returns {'OK', changed ('1' or '0'), since_ms}.
--
-- Once this returns from 'pause', no grant is delivered: every granting
-- step and every refill checks the flag in its own script. Running tools
-- finish. 'resume' queues a resumed entry so the orchestrator releases
-- what waited.

local denied = refuse_unless(KEYS[1], 'control')
if denied then
  return denied
end
local ts = now_ms()
local cur = redis.call('HMGET', KEYS[1], 'paused', 'paused_since_ms', 'paused_source')
if ARGV[1] == 'pause' then
  if cur[1] then
    return {'OK', '0', cur[2] or ''}
  end
  redis.call('HSET', KEYS[1], 'paused', '1', 'paused_since_ms', tostring(ts), 'paused_by', ARGV[2],
    'paused_reason', ARGV[3], 'paused_source', ARGV[5])
  emit(KEYS[2], ARGV[4], 'paused', ts, {'by', ARGV[2], 'reason', ARGV[3], 'source', ARGV[5]})
  return {'OK', '1', tostring(ts)}
end
if not cur[1] then
  return {'OK', '0', ''}
end
if ARGV[5] == 'stop_file' and cur[3] ~= 'stop_file' then
  return {'OK', '0', cur[2] or ''}
end
redis.call('HDEL', KEYS[1], 'paused', 'paused_since_ms', 'paused_by', 'paused_reason', 'paused_source')
emit(KEYS[2], ARGV[4], 'resumed', ts, {'by', ARGV[2], 'source', ARGV[5],
  'paused_ms', tostring(ts - tonumber(cur[2] or ts))})
enqueue(KEYS[3], 'resumed', {'ts', tostring(ts)})
return {'OK', '1', cur[2] or ''}
