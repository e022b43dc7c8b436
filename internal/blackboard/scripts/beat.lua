-- beat: renew an agent's liveness and record the beating replica.
--
-- KEYS[1] heartbeat STRING  sett:<i>:agent:<agent>:heartbeat
-- KEYS[2] replicas ZSET     sett:<i>:agent:<agent>:replicas
--
-- ARGV[1] consumer name of the replica
-- ARGV[2] heartbeat TTL in milliseconds
--
-- Returns {'OK'}. Replicas silent for ten TTLs are forgotten, so the set
-- stays as small as the number of replicas that recently ran.

local ts = now_ms()
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ts, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ts - 10 * tonumber(ARGV[2]))
return {'OK'}
