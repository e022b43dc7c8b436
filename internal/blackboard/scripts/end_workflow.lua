-- end_workflow: end a running workflow (failed by a budget, or cancelled).
--
-- KEYS[1] workflow HASH  sett:<i>:workflow:<wf>
-- KEYS[2] events STREAM  sett:<i>:events
-- KEYS[3] epoch STRING   sett:<i>:orchestrator:epoch
-- KEYS[4] orchestrator queue STREAM  sett:<i>:orchestrator:queue
-- ARGV[1] JSON request: workflow_id, status, reason, epoch, workflow_channel,
--         events (optional list of {channel, name, fields}: appended with
--         the end, only when this call ends the workflow)
--
-- Returns {'OK', status} when this call ended the workflow,
-- {'WORKFLOW_ENDED', status} when it had already ended, {'NOT_FOUND',
-- 'workflow'} or {'FENCED', epoch} or {'NO_EPOCH', why}.
--
-- The status change and the workflow_completed event are one atomic step,
-- and only a running workflow moves, so the event is emitted exactly once.

local denied = refuse_unless(KEYS[1], 'end_workflow')
if denied then
  return denied
end
local req = cjson.decode(ARGV[1])
local refusal = epoch_refusal(KEYS[3], req.epoch, true)
if refusal then
  return refusal
end
local status = redis.call('HGET', KEYS[1], 'status')
if status == false then
  return {'NOT_FOUND', 'workflow'}
end
if status ~= 'running' then
  return {'WORKFLOW_ENDED', status}
end
local ts = now_ms()
end_workflow(KEYS[1], KEYS[2], req.workflow_channel, req.workflow_id, req.status, req.reason, ts, KEYS[4])
emit_all(KEYS[2], ts, req.events)
return {'OK', req.status}
