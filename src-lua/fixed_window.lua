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

rl_algorithms.fw = function()
  local function read(key)
    local value = redis.call('GET', key)
    if not value then
      return nil, 0
    end
    local window, used = string.match(value, '^(%-?%d+) (%d+)$')
    return tonumber(window), tonumber(used)
  end

  local function decide(k, now, capacity, period, cost)
    local key = KEYS[k]
    local window = now - (now % period)
    local stored, count = read(key)
    local used = 0
    if stored == window then
      used = count
    end
    local until_end = window + period - now
    if used + cost <= capacity then
      return 1, capacity - used - cost, until_end, 0, 0, used + cost
    end
    return 0, math.max(0, capacity - used), until_end, until_end, 0, nil
  end

  -- the key expires when its window ends
  local function commit(k, now, capacity, period, cost, used)
    local window = now - (now % period)
    redis.call('SET', KEYS[k], rl_int(window) .. ' ' .. rl_int(used), 'PX', rl_ttl(window + period - now))
  end

  local function refund(k, timestamp, capacity, period, cost)
    local key = KEYS[k]
    local window = timestamp - (timestamp % period)
    local stored, count = read(key)
    if stored == window then
      redis.call('SET', key, rl_int(window) .. ' ' .. rl_int(math.max(0, count - cost)), 'KEEPTTL')
    end
  end

  return { keys = 1, decide = decide, commit = commit, refund = refund }
end

-- standalone entry --
return rl_standalone('fw', 6)
