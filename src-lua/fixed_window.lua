-- fixed_window.lua: at most C units per window, windows of length P aligned to the epoch,
-- or for a calendar quota the calendar days, weeks or months whose boundaries the
-- application passes (Redis knows no time zones).
--
-- KEYS[1]  bucket key; a string "<window start µs> <units used>"
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  'acquire' or 'refund' (refund: ARGV[1] is the timestamp of the acquisition)
-- ARGV[3]  capacity C
-- ARGV[4]  period P in microseconds, or for a calendar quota its window boundaries around
--          the application's present, "<previous> <current> <next> <after next>" in µs
-- ARGV[5]  cost k
-- Reply    {now, allowed (1|0), remaining, reset_us, retry_after_us, delay_us}
--
-- The key expires when its window ends. A charge (a settlement beyond its reservation)
-- counts into the window containing now, past C if need be: that window then rejects
-- until it ends, and the debt ends with it. A calendar quota decides in the window of the
-- passed boundaries that contains now: Redis's clock says which window a request falls
-- in, the application's time zone rules where the windows begin and end. A Redis clock
-- outside the passed windows (more than a whole window away from the application's)
-- fails the call rather than count into a window nobody computed.

rl_algorithms.fw = function()
  local function read(key)
    local value = redis.call('GET', key)
    if not value then
      return nil, 0
    end
    local window, used = string.match(value, '^(%-?%d+) (%d+)$')
    return tonumber(window), tonumber(used)
  end

  -- the window containing `at`: its start and end, or nil when the boundaries of a
  -- calendar quota do not contain it
  local function window_of(at, param)
    if type(param) == 'number' then
      local window = at - (at % param)
      return window, window + param
    end
    for i = 1, #param - 1 do
      if at >= param[i] and at < param[i + 1] then
        return param[i], param[i + 1]
      end
    end
    return nil, nil
  end

  local function current(now, param)
    local window, ends = window_of(now, param)
    if window == nil then
      error('calendar quota: the Redis time ' .. rl_int(now) .. ' is outside the windows the application sent ('
        .. rl_int(param[1]) .. ' to ' .. rl_int(param[#param]) .. '); the clocks of Redis and the application'
        .. ' differ by more than a window')
    end
    return window, ends
  end

  local function decide(k, now, capacity, param, cost)
    local key = KEYS[k]
    local window, ends = current(now, param)
    local stored, count = read(key)
    local used = 0
    if stored == window then
      used = count
    end
    local until_end = ends - now
    if used + cost <= capacity then
      return 1, capacity - used - cost, until_end, 0, 0, used + cost
    end
    return 0, math.max(0, capacity - used), until_end, until_end, 0, nil
  end

  -- the key expires when its window ends
  local function commit(k, now, capacity, param, cost, used)
    local window, ends = current(now, param)
    redis.call('SET', KEYS[k], rl_int(window) .. ' ' .. rl_int(used), 'PX', rl_ttl(ends - now))
  end

  -- gives back only to the window the acquisition was counted in, if it is still the stored one
  local function refund(k, timestamp, capacity, param, cost)
    local key = KEYS[k]
    local window = window_of(timestamp, param)
    if window == nil then
      return
    end
    local stored, count = read(key)
    if stored == window then
      redis.call('SET', key, rl_int(window) .. ' ' .. rl_int(math.max(0, count - cost)), 'KEEPTTL')
    end
  end

  local function charge(k, now, capacity, param, cost)
    local window = current(now, param)
    local stored, count = read(KEYS[k])
    local used = 0
    if stored == window then
      used = count
    end
    commit(k, now, capacity, param, cost, used + cost)
  end

  return { keys = 1, decide = decide, commit = commit, refund = refund, charge = charge }
end

-- standalone entry --
return rl_standalone('fw', 6)
