-- record_learning: store one learning from a human rejection, once.
--
-- KEYS[1] learnings HASH       sett:<i>:learnings
-- KEYS[2] learning index ZSET  sett:<i>:index:learnings
-- KEYS[3] events STREAM        sett:<i>:events
-- KEYS[4] leader epoch STRING  sett:<i>:orchestrator:epoch
--
-- ARGV[1] JSON learning without at_ms (set here from the Redis clock)
-- ARGV[2] leader epoch of the caller
-- ARGV[3] pub/sub channel for the event
--
-- Returns {'OK', at_ms} or {'EXISTS', at_ms} (recorded before: a repeat
-- changes nothing) or {'FENCED', epoch} or {'NO_EPOCH', why}.
--
-- The hash entry, its index entry and the learning_recorded event (which
-- the vault turns into a line of Agent_Memory.md) appear together.

local refusal = epoch_refusal(KEYS[4], ARGV[2])
if refusal then
  return refusal
end
local l = cjson.decode(ARGV[1])
local existing = redis.call('ZSCORE', KEYS[2], l.id)
if existing then
  return {'EXISTS', existing}
end
local ts = now_ms()
l.at_ms = ts
redis.call('HSET', KEYS[1], l.id, cjson.encode(l))
redis.call('ZADD', KEYS[2], ts, l.id)
emit(KEYS[3], ARGV[3], 'learning_recorded', ts, {
  'workflow_id', l.workflow_id or '',
  'artefact_id', l.artefact_id or '',
  'learning_id', l.id,
  'source', l.source or '',
})
return {'OK', tostring(ts)}
