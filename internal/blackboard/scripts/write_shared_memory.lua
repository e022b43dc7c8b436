-- write_shared_memory: replace a workflow's shared memory if nobody merged
-- since the caller read it.
--
-- KEYS[1] shared memory HASH  sett:<i>:workflow:<wf>:shared_memory
-- KEYS[2] events STREAM       sett:<i>:events
-- KEYS[3] leader epoch STRING sett:<i>:orchestrator:epoch
--
-- ARGV[1] the new document (JSON)
-- ARGV[2] the revision the caller read (0: none yet)
-- ARGV[3] leader epoch of the caller
-- ARGV[4] workflow id, ARGV[5] claim id (for the event), ARGV[6] channel
--
-- Returns {'OK', rev} or {'STALE_MEMORY', rev} or {'FENCED', epoch} or {'NO_EPOCH', why}.
--
-- The orchestrator is the single writer; the compare on the
-- revision keeps two claims of one workflow that end phases at once from
-- losing each other's merge: the loser reads again and merges again.

local refusal = epoch_refusal(KEYS[3], ARGV[3])
if refusal then
  return refusal
end
local rev = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') or 0
if rev ~= tonumber(ARGV[2]) then
  return {'STALE_MEMORY', tostring(rev)}
end
redis.call('HSET', KEYS[1], 'json', ARGV[1], 'rev', tostring(rev + 1))
emit(KEYS[2], ARGV[6], 'memory_merged', now_ms(), {'workflow_id', ARGV[4], 'claim_id', ARGV[5], 'rev', tostring(rev + 1)})
return {'OK', tostring(rev + 1)}
