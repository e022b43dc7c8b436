-- retry_claim: re-run a failed claim with a fresh attempt budget (`sett
-- retry`).
--
-- KEYS[1] claim HASH          sett:<i>:claim:<id>
-- KEYS[2] workflow HASH       sett:<i>:workflow:<wf>
-- KEYS[3] outputs HASH        sett:<i>:claim:<id>:outputs
-- KEYS[4] failures SET        sett:<i>:claim:<id>:failures
-- KEYS[5] active claims ZSET  sett:<i>:index:claims:active
-- KEYS[6] timers ZSET         sett:<i>:timers
-- KEYS[7] events STREAM       sett:<i>:events
-- KEYS[8] orchestrator queue STREAM sett:<i>:orchestrator:queue
--
-- ARGV[1] JSON request: id, workflow_id, by, claim_channel, workflow_channel
--
-- Returns {'OK', status, reopened ('1' when the workflow was reopened)},
--   {'ALREADY', status}         retried before and still open: nothing done
--   {'NOT_FAILED', status, why} the claim did not fail (or cannot be re-run)
--   {'WORKFLOW_ENDED', status}  its workflow ended otherwise (cancelled ...)
--   {'NOT_FOUND', 'claim'}
--
-- One step: the failed workflow runs again, the claim is back in the phase
-- it failed in, and each failed agent's retry state says "re-grant now,
-- attempt 1" (failed 0, due now, on its last Failure). The orchestrator's
-- retry path then re-grants through the scheduler exactly as after a
-- backoff, with its compare-and-set; the claim's timer and a queue entry
-- make sure it looks at once. Every Failure artefact stays in the trail.
-- The compare on 'terminated' makes a repeat a no-op.

local denied = refuse_unless(KEYS[1], 'retry')
if denied then
  return denied
end
local req = cjson.decode(ARGV[1])
local cur = redis.call('HMGET', KEYS[1], 'status', 'terminated_from', 'retried_at_ms', 'rev')
local status = cur[1]
if status == false then
  return {'NOT_FOUND', 'claim'}
end
if status ~= 'terminated' then
  if cur[3] and status ~= 'complete' then
    return {'ALREADY', status}
  end
  return {'NOT_FAILED', status, 'it is ' .. status}
end
local agents = redis.call('SMEMBERS', KEYS[4])
if #agents == 0 then
  return {'NOT_FAILED', status, 'it was terminated, not failed by an agent: ' ..
    (redis.call('HGET', KEYS[1], 'termination_reason') or '')}
end
local from = cur[2]
if not from or from == '' or from == 'pending_consensus' or from == 'pending_approval' then
  return {'NOT_FAILED', status, 'it ended before this version of sett recorded its phase'}
end
local wf = redis.call('HGET', KEYS[2], 'status')
if wf == false then
  return {'NOT_FOUND', 'workflow'}
end
if wf ~= 'running' and wf ~= 'failed' then
  return {'WORKFLOW_ENDED', wf}
end

local ts = now_ms()
local retries = {}
for _, agent in ipairs(agents) do
  local failure = redis.call('HGET', KEYS[3], agent)
  if failure then
    retries[agent] = {failed = 0, due_ms = ts, failure_id = failure}
  end
end
local rev = tonumber(cur[4] or '0') or 0
redis.call('HSET', KEYS[1], 'status', from, 'rev', tostring(rev + 1), 'updated_at_ms', tostring(ts),
  'retries', cjson.encode(retries), 'retried_at_ms', tostring(ts), 'retried_by', req.by or '')
redis.call('HDEL', KEYS[1], 'termination_reason', 'terminated_from')
redis.call('ZADD', KEYS[5], ts, req.id)
redis.call('ZADD', KEYS[6], ts, req.id)

local reopened = '0'
if wf == 'failed' then
  -- The claim's open item was never closed: a failing claim ends its
  -- workflow before it would close (see end_workflow in lib.lua).
  redis.call('HSET', KEYS[2], 'status', 'running')
  redis.call('HDEL', KEYS[2], 'ended_at_ms', 'outcome')
  emit(KEYS[7], req.workflow_channel, 'workflow_reopened', ts,
    {'workflow_id', req.workflow_id, 'claim_id', req.id, 'by', req.by or '', 'reason', 'sett retry'})
  reopened = '1'
end
emit(KEYS[7], req.claim_channel, 'claim_retried', ts,
  {'claim_id', req.id, 'workflow_id', req.workflow_id, 'from', 'terminated', 'to', from,
   'agents', table.concat(agents, ','), 'by', req.by or ''})
enqueue(KEYS[8], 'claim_retried', {'claim_id', req.id, 'workflow_id', req.workflow_id, 'ts', tostring(ts)})
return {'OK', from, reopened}
