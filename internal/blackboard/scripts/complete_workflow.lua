-- complete_workflow: complete a running workflow that has nothing open
-- left, as close_item would have. A result's script leaves this to the
-- orchestrator when its caller may not end workflows (a cub's Redis user:
-- its queue entry says ended 'due').
--
-- KEYS[1] workflow HASH  sett:<i>:workflow:<wf>
-- KEYS[2] events STREAM  sett:<i>:events
-- KEYS[3] epoch STRING   sett:<i>:orchestrator:epoch
-- ARGV[1] JSON request: workflow_id, epoch, workflow_channel
--
-- Returns {'OK', '1'} when it completed the workflow, {'OK', '0'} when the
-- workflow had ended or has open items again, or {'FENCED', epoch} or
-- {'NO_EPOCH', why}.
local denied = refuse_unless(KEYS[1], 'end_workflow')
if denied then
  return denied
end
local req = cjson.decode(ARGV[1])
local refusal = epoch_refusal(KEYS[3], req.epoch)
if refusal then
  return refusal
end
local w = redis.call('HMGET', KEYS[1], 'status', 'open_items', 'chain_ends')
if w[1] ~= 'running' or (tonumber(w[2] or '0') or 0) > 0 then
  return {'OK', '0'}
end
local outcome = 'all work complete'
if w[3] then
  outcome = outcome .. '; chain ends by configuration: ' .. w[3]
end
if end_workflow(KEYS[1], KEYS[2], req.workflow_channel, req.workflow_id, 'completed', outcome, now_ms(), nil) then
  return {'OK', '1'}
end
return {'OK', '0'}
