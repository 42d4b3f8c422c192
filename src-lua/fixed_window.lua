-- fixed_window.lua: at most C units per window of length P, windows aligned to the epoch.
--
-- KEYS[1]  bucket key; a string "<window start µs> <units used>"
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  'acquire' or 'refund' (refund: ARGV[1] is the timestamp of the acquisition)
-- ARGV[3]  capacity C
-- ARGV[4]  period P in microseconds
-- ARGV[5]  cost k
-- Reply    {now, allowed (1|0), remaining, reset_us, retry_after_us, delay_us}
--
-- The key expires when its window ends.

local fixed_window = {}

local function fw_read(key)
  local value = redis.call('GET', key)
  if not value then
    return nil, 0
  end
  local window, used = string.match(value, '^(%-?%d+) (%d+)$')
  return tonumber(window), tonumber(used)
end

function fixed_window.decide(key, now, capacity, period, cost)
  local window = now - (now % period)
  local stored, count = fw_read(key)
  local used = 0
  if stored == window then
    used = count
  end
  local until_end = window + period - now
  if used + cost <= capacity then
    return { 1, capacity - used - cost, until_end, 0, 0 }, function()
      redis.call('SET', key, rl_int(window) .. ' ' .. rl_int(used + cost), 'PX', rl_ttl(until_end))
    end
  end
  return { 0, math.max(0, capacity - used), until_end, until_end, 0 }, nil
end

function fixed_window.refund(key, timestamp, capacity, period, cost)
  local window = timestamp - (timestamp % period)
  local stored, count = fw_read(key)
  if stored == window then
    redis.call('SET', key, rl_int(window) .. ' ' .. rl_int(math.max(0, count - cost)), 'KEEPTTL')
  end
end

rl_algorithms.fw = {
  keys = 1,
  decide = function(k, now, capacity, period, cost)
    return fixed_window.decide(KEYS[k], now, capacity, period, cost)
  end,
  refund = function(k, timestamp, capacity, period, cost)
    fixed_window.refund(KEYS[k], timestamp, capacity, period, cost)
  end,
}

-- standalone entry --
local now = rl_now(ARGV[1])
local capacity, period, cost = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if ARGV[2] == 'refund' then
  fixed_window.refund(KEYS[1], now, capacity, period, cost)
  return { now }
end
local decision, commit = fixed_window.decide(KEYS[1], now, capacity, period, cost)
if commit then
  commit()
end
return { now, decision[1], decision[2], decision[3], decision[4], decision[5] }
