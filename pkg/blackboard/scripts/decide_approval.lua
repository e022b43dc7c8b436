-- decide_approval: record a human's decision on a claim waiting in
-- pending_approval, once, and wake the orchestrator to apply it.
--
-- KEYS[1] claim HASH               sett:<i>:claim:<id>
-- KEYS[2] thread ZSET              sett:<i>:thread:<logical_id of the artefact shown>
-- KEYS[3] events STREAM            sett:<i>:events
-- KEYS[4] orchestrator queue STREAM sett:<i>:orchestrator:queue
--
-- ARGV[1] JSON request: claim_id, artefact_id (the version the human was
--         shown), decision (approved|rejected), by, channel, reason,
--         claim_channel.
--
-- Returns {'OK', decided_at_ms} or
--   {'NOT_FOUND', 'claim'}                  the artefact has no claim
--   {'SUPERSEDED', current_id, version}     a newer version of the thread exists
--   {'ALREADY_DECIDED', decision, by}       someone decided first
--   {'STALE_STATUS', status}                the claim does not wait for approval
--   {'EXPIRED', expires_at_ms}              the approval timed out
--
-- The decision is stored on the claim with a rev bump, so an orchestrator
-- step computed before it (an expiry, say) fails its compare-and-set and
-- re-reads; the orchestrator applies the decision (the human Review
-- artefact, the next status) from the stored fields, level-triggered.

local denied = refuse_unless(KEYS[1], 'decide')
if denied then
  return denied
end
local req = cjson.decode(ARGV[1])
local cur = redis.call('HMGET', KEYS[1], 'status', 'artefact_id', 'workflow_id', 'approval_decision',
  'approval_by', 'approval_expires_at_ms', 'rev')
if cur[1] == false then
  return {'NOT_FOUND', 'claim'}
end
local head = redis.call('ZREVRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #head > 0 and head[1] ~= req.artefact_id then
  return {'SUPERSEDED', head[1], head[2]}
end
if cur[4] then
  return {'ALREADY_DECIDED', cur[4], cur[5] or ''}
end
if cur[1] ~= 'pending_approval' then
  return {'STALE_STATUS', cur[1]}
end
local ts = now_ms()
local expires = tonumber(cur[6] or '0')
if expires > 0 and ts >= expires then
  return {'EXPIRED', tostring(expires)}
end
redis.call('HSET', KEYS[1], 'approval_decision', req.decision, 'approval_by', req.by,
  'approval_channel', req.channel, 'approval_reason', req.reason, 'approval_decided_at_ms', tostring(ts),
  'rev', tostring(tonumber(cur[7] or '0') + 1), 'updated_at_ms', tostring(ts))
emit(KEYS[3], req.claim_channel, 'approval_decided', ts, {
  'claim_id', req.claim_id,
  'artefact_id', req.artefact_id,
  'workflow_id', cur[3],
  'decision', req.decision,
  'by', req.by,
  'channel', req.channel,
  'reason', req.reason,
})
enqueue(KEYS[4], 'approval_decided', {'claim_id', req.claim_id, 'workflow_id', cur[3], 'ts', tostring(ts)})
return {'OK', tostring(ts)}
