-- lib.lua: helpers shared by every Sett script. The Go loader prepends this
-- file to each script before SCRIPT LOAD, so a script is still one atomic
-- unit on the server. Nothing here touches a key that was not passed in
-- KEYS[] by the calling script.

-- now_ms returns the Redis server clock in milliseconds. Using the server
-- clock (not a client's) keeps timestamps and timer deadlines comparable
-- across hosts.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- fenced reports whether a leader epoch given by the caller is older than
-- the stored one. An empty epoch means "not an orchestrator write".
local function fenced(epoch_key, epoch)
  if epoch == nil or epoch == '' or epoch == cjson.null then
    return false
  end
  local cur = redis.call('GET', epoch_key)
  return cur ~= false and tonumber(cur) ~= tonumber(epoch)
end

-- emit appends one event to the stream and publishes it as JSON on its
-- channel. fields is a flat list k1, v1, k2, v2 ...; the event name comes
-- first and the server time second so that redis-cli XRANGE reads well.
local function emit(stream, channel, name, ts, fields)
  local args = {'XADD', stream, '*', 'event', name, 'ts', tostring(ts)}
  local doc = {event = name, ts = ts}
  for i = 1, #fields, 2 do
    local v = fields[i + 1]
    if v ~= nil and v ~= '' and v ~= cjson.null then
      args[#args + 1] = fields[i]
      args[#args + 1] = tostring(v)
      doc[fields[i]] = tostring(v)
    end
  end
  local id = redis.call(unpack(args))
  if channel ~= nil and channel ~= '' then
    doc.id = id
    redis.call('PUBLISH', channel, cjson.encode(doc))
  end
  return id
end

-- emit_all appends events supplied by the caller: a list of
-- {channel = ..., name = ..., fields = {k, v, ...}}.
local function emit_all(stream, ts, events)
  if events == nil or events == cjson.null then
    return
  end
  for _, e in ipairs(events) do
    emit(stream, e.channel, e.name, ts, e.fields or {})
  end
end

-- deliver appends caller-built messages to agent inbox streams; each message
-- names its stream by index into KEYS, so no key is ever built here.
local function deliver(inbox, ts)
  if inbox == nil or inbox == cjson.null then
    return
  end
  for _, m in ipairs(inbox) do
    local args = {'XADD', KEYS[m.key], '*'}
    for i = 1, #m.fields, 2 do
      args[#args + 1] = m.fields[i]
      args[#args + 1] = tostring(m.fields[i + 1])
    end
    local id = redis.call(unpack(args))
    if m.channel ~= nil and m.channel ~= '' then
      local doc = {id = id, ts = ts}
      for i = 1, #m.fields, 2 do
        doc[m.fields[i]] = tostring(m.fields[i + 1])
      end
      redis.call('PUBLISH', m.channel, cjson.encode(doc))
    end
  end
end

-- enqueue appends an entry for the orchestrator to act on (its queue
-- stream); fields is a flat list k1, v1, ...
local function enqueue(queue, name, fields)
  local args = {'XADD', queue, '*', 'event', name}
  for i = 1, #fields, 2 do
    local v = fields[i + 1]
    if v ~= nil and v ~= '' and v ~= cjson.null then
      args[#args + 1] = fields[i]
      args[#args + 1] = tostring(v)
    end
  end
  redis.call(unpack(args))
end

-- end_workflow moves a running workflow to a final status and announces it
-- once. A workflow that fails or is cancelled is also queued for the
-- orchestrator, which then ends its open claims. Returns true when this
-- call ended it.
local function end_workflow(wf_key, stream, channel, wf_id, status, reason, ts, queue)
  if redis.call('HGET', wf_key, 'status') ~= 'running' then
    return false
  end
  redis.call('HSET', wf_key, 'status', status, 'ended_at_ms', tostring(ts), 'outcome', reason)
  emit(stream, channel, 'workflow_completed', ts,
    {'workflow_id', wf_id, 'status', status, 'reason', reason})
  if status ~= 'completed' then
    enqueue(queue, 'workflow_completed', {'workflow_id', wf_id, 'status', status, 'ts', tostring(ts)})
  end
  return true
end

-- close_item decrements a running workflow's open items and completes the
-- workflow when nothing is left open.
local function close_item(wf_key, stream, channel, wf_id, ts, queue)
  if redis.call('HGET', wf_key, 'status') ~= 'running' then
    return
  end
  local open = redis.call('HINCRBY', wf_key, 'open_items', -1)
  if open <= 0 then
    end_workflow(wf_key, stream, channel, wf_id, 'completed', 'all work complete', ts, queue)
  end
end

-- ack_inbox acknowledges and deletes an agent's handled inbox entry in the
-- same step as its effect, so a cub never redoes finished work and never
-- needs a round trip of its own for the acknowledgement.
local function ack_inbox(inbox, group, entry)
  if entry == nil or entry == '' or entry == cjson.null then
    return
  end
  redis.call('XACK', inbox, group, entry)
  redis.call('XDEL', inbox, entry)
end
