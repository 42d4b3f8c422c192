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
-- Java store. The key expires when the next window ends (then it no longer weighs). A
-- charge (a settlement beyond its reservation) counts into the current window, past C if
-- need be, and weighs as any unit of it does.

rl_algorithms.swc = function()
  local function read(key)
    local value = redis.call('GET', key)
    if not value then
      return nil, 0, 0
    end
    local window, curr, prev = string.match(value, '^(%-?%d+) (%d+) (%d+)$')
    return tonumber(window), tonumber(curr), tonumber(prev)
  end

  -- Units of the current and the previous window as seen from `window`.
  local function counts(key, window, period)
    local stored, curr, prev = read(key)
    if stored == window then
      return curr, prev
    end
    if stored == window - period then
      return 0, curr
    end
    return 0, 0
  end

  local function until_more(free, remaining, curr, prev, p, elapsed, capacity)
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

  local function decide(k, now, capacity, period, cost)
    local key = KEYS[k]
    local window = now - (now % period)
    local curr, prev = counts(key, window, period)
    local p = period
    local elapsed = now - window
    local prev_weight = prev * (p - elapsed)
    if (curr + cost) * p + prev_weight <= capacity * p then
      local after = curr + cost
      local free = capacity * p - after * p - prev_weight
      local remaining = math.floor(free / p)
      return 1, remaining, until_more(free, remaining, after, prev, p, elapsed, capacity), 0, 0, { after, prev }
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
    return 0, remaining, until_more(free, remaining, curr, prev, p, elapsed, capacity), wait, 0, nil
  end

  -- counts: this window's and the previous one's; the key expires when the next window ends
  local function commit(k, now, capacity, period, cost, counts)
    local window = now - (now % period)
    redis.call('SET', KEYS[k], rl_int(window) .. ' ' .. rl_int(counts[1]) .. ' ' .. rl_int(counts[2]),
      'PX', rl_ttl(window + 2 * period - now))
  end

  local function refund(k, timestamp, capacity, period, cost)
    local key = KEYS[k]
    local window = timestamp - (timestamp % period)
    local stored, curr, prev = read(key)
    if stored == window then
      redis.call('SET', key, rl_int(stored) .. ' ' .. rl_int(math.max(0, curr - cost)) .. ' ' .. rl_int(prev), 'KEEPTTL')
    elseif stored == window + period then
      redis.call('SET', key, rl_int(stored) .. ' ' .. rl_int(curr) .. ' ' .. rl_int(math.max(0, prev - cost)), 'KEEPTTL')
    end
  end

  local function charge(k, now, capacity, period, cost)
    local window = now - (now % period)
    local curr, prev = counts(KEYS[k], window, period)
    commit(k, now, capacity, period, cost, { curr + cost, prev })
  end

  return { keys = 1, decide = decide, commit = commit, refund = refund, charge = charge }
end

-- standalone entry --
return rl_standalone('swc', 6)
