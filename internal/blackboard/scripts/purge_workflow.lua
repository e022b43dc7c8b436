-- purge_workflow: delete one finished workflow's records and index entries
-- once its retention period has passed (retention).
--
-- KEYS[1]  workflow HASH            sett:<i>:workflow:<wf>
-- KEYS[2]  workflows ZSET           sett:<i>:index:workflows
-- KEYS[3]  artefacts ZSET           sett:<i>:index:artefacts
-- KEYS[4]  artefact ids ZSET        sett:<i>:index:artefact_ids
-- KEYS[5]  claim ids ZSET           sett:<i>:index:claim_ids
-- KEYS[6]  active claims ZSET       sett:<i>:index:claims:active
-- KEYS[7]  approvals ZSET           sett:<i>:index:approvals
-- KEYS[8]  timers ZSET              sett:<i>:timers
-- KEYS[9]  running SET              sett:<i>:scheduler:running
-- KEYS[10] workflow artefacts ZSET  sett:<i>:index:workflow:<wf>
-- KEYS[11] workflow claims ZSET     sett:<i>:index:workflow:<wf>:claims
-- KEYS[12..] every other key of the workflow (artefacts, threads, claims,
--            bids, grants, outputs, failures, claim_by_artefact,
--            memories, shared memory), deleted whole
-- ARGV[1] JSON request: min_age_ms, artefacts (ids), claims (ids), dry_run
--
-- Returns {'OK', deleted keys} when the workflow was deleted (or, with
-- dry_run, would be), {'NOT_FOUND', 'workflow'}, {'RUNNING', status} when
-- it has not ended, {'RETAINED', ended_at_ms} while its retention period
-- lasts, or {'CHANGED', 'artefacts'|'claims'} when the caller's lists no
-- longer match the workflow's indexes (a late write; read again).
--
-- Everything goes in one step, so a crash never leaves a workflow hash
-- whose artefacts are gone, nor artefacts no index can reach. The checks
-- make it idempotent: a second call finds nothing and says NOT_FOUND.

local denied = refuse_unless(KEYS[1], 'maintain')
if denied then
  return denied
end
local req = cjson.decode(ARGV[1])
local status = redis.call('HGET', KEYS[1], 'status')
if status == false then
  return {'NOT_FOUND', 'workflow'}
end
if status == 'running' then
  return {'RUNNING', status}
end
local ended = tonumber(redis.call('HGET', KEYS[1], 'ended_at_ms') or '0') or 0
if ended + tonumber(req.min_age_ms) > now_ms() then
  return {'RETAINED', tostring(ended)}
end
local artefacts = req.artefacts
if artefacts == cjson.null or artefacts == nil then artefacts = {} end
local claims = req.claims
if claims == cjson.null or claims == nil then claims = {} end
if redis.call('ZCARD', KEYS[10]) ~= #artefacts then
  return {'CHANGED', 'artefacts'}
end
if redis.call('ZCARD', KEYS[11]) ~= #claims then
  return {'CHANGED', 'claims'}
end
for _, id in ipairs(artefacts) do
  if redis.call('ZSCORE', KEYS[10], id) == false then
    return {'CHANGED', 'artefacts'}
  end
end
for _, id in ipairs(claims) do
  if redis.call('ZSCORE', KEYS[11], id) == false then
    return {'CHANGED', 'claims'}
  end
end

local n = 0
for i = 1, #KEYS do
  if i == 1 or i >= 10 then
    n = n + redis.call('EXISTS', KEYS[i])
  end
end
if req.dry_run then
  return {'OK', tostring(n)}
end

-- ZREM/SREM take many members; chunk them to stay within Lua's unpack
-- limit on large workflows.
local function remove(cmd, key, ids)
  for i = 1, #ids, 500 do
    local chunk = {}
    for j = i, math.min(i + 499, #ids) do
      chunk[#chunk + 1] = ids[j]
    end
    redis.call(cmd, key, unpack(chunk))
  end
end
if #artefacts > 0 then
  remove('ZREM', KEYS[3], artefacts)
  remove('ZREM', KEYS[4], artefacts)
end
if #claims > 0 then
  remove('ZREM', KEYS[5], claims)
  remove('ZREM', KEYS[6], claims)
  remove('ZREM', KEYS[7], claims)
  remove('ZREM', KEYS[8], claims)
  remove('SREM', KEYS[9], claims)
end
redis.call('ZREM', KEYS[2], req.workflow_id)
for i = 1, #KEYS do
  if i == 1 or i >= 10 then
    redis.call('UNLINK', KEYS[i])
  end
end
return {'OK', tostring(n)}
