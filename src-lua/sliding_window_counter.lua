-- sliding_window_counter.lua: curr + prev * (1 - elapsed / P) + k <= C over epoch-aligned windows.
--
-- KEYS[1]  bucket key; a string "<window start µs> <units this window> <units previous window>"
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  'acquire' or 'refund' (refund: ARGV[1] is the timestamp of the acquisition)
-- ARGV[3]  capacity C
-- ARGV[4]  period P in microseconds
-- ARGV[5]  cost k
-- Reply    {now, allowed (1|0), remaining, reset_us, retry_after_us, delay_us}
--
-- Computed as (curr + k) * P + prev * (P - elapsed) <= C * P, in the same order as the
-- Java store. The key expires when the next window ends (then it no longer weighs).

local sliding_window_counter = {}

local function swc_read(key)
  local value = redis.call('GET', key)
  if not value then
    return nil, 0, 0
  end
  local window, curr, prev = string.match(value, '^(%-?%d+) (%d+) (%d+)$')
  return tonumber(window), tonumber(curr), tonumber(prev)
end

-- Units of the current and the previous window as seen from `window`.
local function swc_counts(key, window, period)
  local stored, curr, prev = swc_read(key)
  if stored == window then
    return curr, prev
  end
  if stored == window - period then
    return 0, curr
  end
  return 0, 0
end

local function swc_until_more(free, remaining, curr, prev, p, elapsed, capacity)
  if remaining >= capacity then
    return 0
  end
  local target = (remaining + 1) * p
  if prev > 0 then
    local within = math.ceil((target - free) / prev)
    if elapsed + within <= p then
      return within
    end
  end
  if curr == 0 then
    return p - elapsed
  end
  local nxt = math.max(0, math.ceil((target - capacity * p + curr * p) / curr))
  return (p - elapsed) + nxt
end

function sliding_window_counter.decide(key, now, capacity, period, cost)
  local window = now - (now % period)
  local curr, prev = swc_counts(key, window, period)
  local p = period
  local elapsed = now - window
  local prev_weight = prev * (p - elapsed)
  if (curr + cost) * p + prev_weight <= capacity * p then
    local after = curr + cost
    local free = capacity * p - after * p - prev_weight
    local remaining = math.floor(free / p)
    local decision = { 1, remaining, swc_until_more(free, remaining, after, prev, p, elapsed, capacity), 0, 0 }
    return decision, function()
      redis.call('SET', key, rl_int(window) .. ' ' .. rl_int(after) .. ' ' .. rl_int(prev),
        'PX', rl_ttl(window + 2 * period - now))
    end
  end
  local free = capacity * p - curr * p - prev_weight
  local remaining = math.max(0, math.floor(free / p))
  local wait
  if curr + cost <= capacity then
    -- the previous window still weighs too much: wait until it has decayed enough
    wait = p - math.floor((capacity - curr - cost) * p / prev) - elapsed
  else
    -- wait for the next window, where this window becomes the previous one
    local nxt = 0
    if curr ~= 0 then
      nxt = math.max(0, p - math.floor((capacity - cost) * p / curr))
    end
    wait = (p - elapsed) + nxt
  end
  return { 0, remaining, swc_until_more(free, remaining, curr, prev, p, elapsed, capacity), wait, 0 }, nil
end

function sliding_window_counter.refund(key, timestamp, capacity, period, cost)
  local window = timestamp - (timestamp % period)
  local stored, curr, prev = swc_read(key)
  if stored == window then
    redis.call('SET', key, rl_int(stored) .. ' ' .. rl_int(math.max(0, curr - cost)) .. ' ' .. rl_int(prev), 'KEEPTTL')
  elseif stored == window + period then
    redis.call('SET', key, rl_int(stored) .. ' ' .. rl_int(curr) .. ' ' .. rl_int(math.max(0, prev - cost)), 'KEEPTTL')
  end
end

rl_algorithms.swc = {
  keys = 1,
  decide = function(k, now, capacity, period, cost)
    return sliding_window_counter.decide(KEYS[k], now, capacity, period, cost)
  end,
  refund = function(k, timestamp, capacity, period, cost)
    sliding_window_counter.refund(KEYS[k], timestamp, capacity, period, cost)
  end,
}

-- standalone entry --
local now = rl_now(ARGV[1])
local capacity, period, cost = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if ARGV[2] == 'refund' then
  sliding_window_counter.refund(KEYS[1], now, capacity, period, cost)
  return { now }
end
local decision, commit = sliding_window_counter.decide(KEYS[1], now, capacity, period, cost)
if commit then
  commit()
end
return { now, decision[1], decision[2], decision[3], decision[4], decision[5] }
