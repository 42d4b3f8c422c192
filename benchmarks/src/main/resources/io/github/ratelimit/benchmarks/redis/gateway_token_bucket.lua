-- gateway_token_bucket.lua: a token bucket in the shape Spring Cloud Gateway's
-- RedisRateLimiter publishes, written for the benchmark as a point of comparison.
-- Two keys per identity (tokens left and time of the last refill, in whole seconds of
-- Redis TIME), both read, refilled, and written back with a TTL of twice the fill time.
--
-- KEYS[1]  key holding the tokens left
-- KEYS[2]  key holding the time of the last refill, in seconds
-- ARGV[1]  replenish rate, tokens per second
-- ARGV[2]  burst capacity
-- ARGV[3]  tokens requested
-- Reply    {allowed (1|0), tokens left}

local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local requested = tonumber(ARGV[3])
local now = tonumber(redis.call('TIME')[1])

local ttl = math.floor(capacity / rate * 2)
if ttl < 1 then
  ttl = 1
end

local stored = tonumber(redis.call('GET', KEYS[1]))
if stored == nil then
  stored = capacity
end
local refilled_at = tonumber(redis.call('GET', KEYS[2]))
if refilled_at == nil then
  refilled_at = 0
end

local elapsed = math.max(0, now - refilled_at)
local available = math.min(capacity, stored + elapsed * rate)
local allowed = 0
if available >= requested then
  available = available - requested
  allowed = 1
end

redis.call('SET', KEYS[1], available, 'EX', ttl)
redis.call('SET', KEYS[2], now, 'EX', ttl)
return { allowed, available }
