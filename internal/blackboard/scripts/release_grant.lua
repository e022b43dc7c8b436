-- release_grant: free the slot an agent holds for a claim it will not
-- work on (the grant it read was stale), and hand the slot to its best
-- waiting grant; with an empty claim id, only refill (after a resume, or
-- when a replica joins and the agent's capacity grows).
--
-- KEYS[1] agent running ZSET  sett:<i>:agent:<agent>:running
-- KEYS[2] agent waiting ZSET  sett:<i>:agent:<agent>:waiting
-- KEYS[3] agent replicas ZSET sett:<i>:agent:<agent>:replicas
-- KEYS[4] capacity HASH       sett:<i>:scheduler:capacity
-- KEYS[5] control HASH        sett:<i>:control
-- KEYS[6] agent grants STREAM sett:<i>:agent:<agent>:grants
-- KEYS[7] timers ZSET         sett:<i>:timers
--
-- ARGV[1] agent name
-- ARGV[2] claim id, or ''
--
-- Returns {'OK'}.

local ts = now_ms()
local g = {running = 1, waiting = 2, replicas = 3, capacity = 4, control = 5, inbox = 6, timers = 7, agent = ARGV[1]}
if ARGV[2] ~= '' then
  release_agent(g, ARGV[2], ts)
else
  refill(g, ts)
end
return {'OK'}
