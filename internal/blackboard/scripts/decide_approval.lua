-- decide_approval: record a human's decision on a claim, once, and wake
-- the orchestrator to apply it. Which decisions apply is decided in Go
-- (decisionRule, from a read of the claim and its workflow); this script
-- applies that verdict only if the claim did not change since the read
-- (its rev), so the rule and the write are one step.
--
-- KEYS[1] claim HASH               sett:<i>:claim:<id>
-- KEYS[2] thread ZSET              sett:<i>:thread:<logical_id of the artefact shown>
-- KEYS[3] events STREAM            sett:<i>:events
-- KEYS[4] orchestrator queue STREAM sett:<i>:orchestrator:queue
-- KEYS[5] workflow HASH            sett:<i>:workflow:<wf>
-- KEYS[6] active claims ZSET       sett:<i>:index:claims:active
-- KEYS[7] timers ZSET              sett:<i>:timers
-- KEYS[8] approvals index ZSET     sett:<i>:index:approvals
--
-- ARGV[1] JSON request: claim_id, artefact_id (the version the human was
--         shown), decision (approved|rejected, or '' to ask again), by,
--         channel, reason, claim_channel, workflow_channel, mode
--         ('decide': the claim waits in pending_approval; 'reopen': its
--         approval timed out and ended it, the decision reopens it and
--         its workflow), rev (the claim's rev the verdict was made on).
--
-- Returns {'OK', decided_at_ms, reopened ('1' when the workflow was
-- reopened)} or
--   {'NOT_FOUND', 'claim'}                  the artefact has no claim
--   {'SUPERSEDED', current_id, version}     a newer version of the thread exists
--   {'CHANGED', rev}                        the claim changed since the read: read again
--   {'WORKFLOW_ENDED', status}              reopen: the workflow ended otherwise meanwhile
--
-- The decision is stored on the claim with a rev bump, so an orchestrator
-- step computed before it (an expiry, say) fails its compare-and-set and
-- re-reads; the orchestrator applies the decision (the human Review
-- artefact, the next status) from the stored fields, level-triggered: it
-- looks at a decided claim before its expiry, so a decision that comes
-- after the expiry time but before the orchestrator acted on it applies.

local denied = refuse_unless(KEYS[1], 'decide')
if denied then
  return denied
end
local req = cjson.decode(ARGV[1])
-- Every claim has a workflow_id: its absence means there is no claim.
-- The status is not read: the rev compare below covers it.
local cur = redis.call('HMGET', KEYS[1], 'workflow_id', 'rev')
if cur[1] == false then
  return {'NOT_FOUND', 'claim'}
end
local head = redis.call('ZREVRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #head > 0 and head[1] ~= req.artefact_id then
  return {'SUPERSEDED', head[1], head[2]}
end
local rev = tonumber(cur[2] or '0') or 0
if tostring(rev) ~= tostring(req.rev) then
  return {'CHANGED', tostring(rev)}
end
local ts = now_ms()
local wf_id = cur[1]
local reopened = '0'
local hset = {'HSET', KEYS[1], 'rev', tostring(rev + 1), 'updated_at_ms', tostring(ts)}
if req.decision ~= '' then
  for _, v in ipairs({'approval_decision', req.decision, 'approval_by', req.by, 'approval_channel', req.channel,
      'approval_reason', req.reason, 'approval_decided_at_ms', tostring(ts)}) do
    hset[#hset + 1] = v
  end
end
if req.mode == 'reopen' then
  local wf = redis.call('HGET', KEYS[5], 'status')
  if wf ~= 'running' and wf ~= 'failed' then
    return {'WORKFLOW_ENDED', tostring(wf)}
  end
  hset[#hset + 1] = 'status'
  hset[#hset + 1] = 'pending_approval'
  if req.decision == '' then
    -- Asked again: it waits for a person, with no timeout this time.
    hset[#hset + 1] = 'approval_requested_at_ms'
    hset[#hset + 1] = tostring(ts)
    redis.call('HDEL', KEYS[1], 'approval_expires_at_ms')
    redis.call('ZADD', KEYS[8], ts, req.claim_id)
  end
  redis.call('HDEL', KEYS[1], 'termination_reason', 'terminated_from')
  redis.call('ZADD', KEYS[6], ts, req.claim_id)
  redis.call('ZADD', KEYS[7], ts, req.claim_id)
  if wf == 'failed' then
    -- The claim's open item was never closed: the expiry failed the
    -- workflow before it would close (see end_workflow in lib.lua).
    redis.call('HSET', KEYS[5], 'status', 'running')
    redis.call('HDEL', KEYS[5], 'ended_at_ms', 'outcome')
    local why = 'late approval decision'
    if req.decision == '' then
      why = 'approval asked again'
    end
    emit(KEYS[3], req.workflow_channel, 'workflow_reopened', ts,
      {'workflow_id', wf_id, 'claim_id', req.claim_id, 'by', req.by, 'reason', why})
    reopened = '1'
  end
end
redis.call(unpack(hset))
if req.decision == '' then
  enqueue(KEYS[4], 'claim_retried', {'claim_id', req.claim_id, 'workflow_id', wf_id, 'ts', tostring(ts)})
  return {'OK', tostring(ts), reopened}
end
emit(KEYS[3], req.claim_channel, 'approval_decided', ts, {
  'claim_id', req.claim_id,
  'artefact_id', req.artefact_id,
  'workflow_id', wf_id,
  'decision', req.decision,
  'by', req.by,
  'channel', req.channel,
  'reason', req.reason,
  'late', req.mode == 'reopen' and '1' or '0',
})
enqueue(KEYS[4], 'approval_decided', {'claim_id', req.claim_id, 'workflow_id', wf_id, 'ts', tostring(ts)})
return {'OK', tostring(ts), reopened}
