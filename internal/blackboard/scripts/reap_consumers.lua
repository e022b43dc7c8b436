-- reap_consumers: remove a stream group's consumers that have been idle
-- for at least min_idle_ms and hold no pending entries (dead cub replicas,
-- old orchestrator processes), so consumer names do not pile up.
--
-- KEYS[1] STREAM  an agent's inbox or grants, or the orchestrator queue
-- ARGV[1] group name
-- ARGV[2] min idle, ms
-- ARGV[3] "1" for a dry run (report only)
--
-- Returns the names of the consumers removed (or that would be). A
-- missing stream or group returns an empty list.
--
-- Reading XINFO and deleting in one step means a consumer that was handed
-- an entry in between cannot lose it: with pending entries it is kept.

local denied = refuse_unless(KEYS[1], 'maintain')
if denied then
  return denied
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
local ok, consumers = pcall(redis.call, 'XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if not ok then
  return {}
end
local min_idle = tonumber(ARGV[2])
local removed = {}
for _, c in ipairs(consumers) do
  local info = {}
  for i = 1, #c, 2 do
    info[c[i]] = c[i + 1]
  end
  if tonumber(info['pending']) == 0 and tonumber(info['idle']) >= min_idle then
    if ARGV[3] ~= '1' then
      redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    end
    removed[#removed + 1] = info['name']
  end
end
return removed
