-- token_bucket.lua: token bucket, kept as one timestamp (GCRA); leaky_bucket.lua runs the
-- same functions with ARGV[6] = 1.
--
-- KEYS[1]  bucket key; a string '<tat>:<T>': the time (microseconds) at which the bucket
--          is full again (leaky bucket: the time its queue is empty again) and the emission
--          interval it was computed with (a bare '<tat>' is read with the current T)
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  'acquire' or 'refund' (refund: ARGV[1] is the timestamp of the acquisition)
-- ARGV[3]  capacity C
-- ARGV[4]  emission interval T in microseconds (period / refill tokens, rounded up)
-- ARGV[5]  cost k
-- ARGV[6]  1 for a leaky bucket (admitted requests are delayed to their drain slot), else 0
-- ARGV[7]  optional: longest wait in microseconds for a reserved slot (0 or absent: none)
-- Reply    {now, allowed (1|0), remaining, reset_us, retry_after_us, delay_us}
--
-- The bucket holds C - (tat - now) / T tokens; a request of cost k is admitted when
-- max(tat, now) + k*T - now <= C*T. A request that may reserve (a caller waiting for a
-- permit) is also admitted when its slot, the time its cost fits, is at most the longest
-- wait away (a leaky bucket: its drain slot); the tat then runs ahead of the burst and
-- delay_us is the wait, so callers reserving in turn get slots T apart. The key expires
-- when the bucket is full again, which is after every reserved slot.
-- A bucket written with another interval (its identity moved to another plan) keeps its
-- debt in tokens: tat = now + ceil((tat - now) * T / T_old), as the in-memory store does.

local gcra = {}

-- The time the bucket is full again under interval T, and the interval it was written with.
function gcra.read(key, now, interval)
  local value = redis.call('GET', key)
  if not value then
    return nil, nil
  end
  local sep = string.find(value, ':', 1, true)
  if not sep then
    return tonumber(value), nil
  end
  local tat, written = tonumber(string.sub(value, 1, sep - 1)), tonumber(string.sub(value, sep + 1))
  if tat ~= nil and written ~= nil and written ~= interval and tat > now then
    tat = now + math.ceil((tat - now) * interval / written)
  end
  return tat, written
end

function gcra.decide(key, now, capacity, interval, cost, leaky, max_delay)
  local burst = capacity * interval
  local start = now
  local tat = gcra.read(key, now, interval)
  if tat ~= nil and tat > now then
    start = tat
  end
  local new_tat = start + cost * interval
  if new_tat - now <= burst then
    local debt = new_tat - now
    local delay = 0
    if leaky == 1 then
      delay = start - now
    end
    local decision = { 1, math.floor((burst - debt) / interval), rl_until_next_unit(debt, interval), 0, delay }
    return decision, function()
      redis.call('SET', key, rl_int(new_tat) .. ':' .. rl_int(interval), 'PX', rl_ttl(new_tat - now))
    end
  end
  local wait = new_tat - burst - now
  if max_delay ~= nil and max_delay > 0 then
    local delay = wait
    if leaky == 1 then
      delay = start - now
    end
    if delay <= max_delay then
      -- nothing is left until the bucket has drained past this reservation
      return { 1, 0, wait + interval, 0, delay }, function()
        redis.call('SET', key, rl_int(new_tat) .. ':' .. rl_int(interval), 'PX', rl_ttl(new_tat - now))
      end
    end
  end
  local debt = start - now
  local remaining = math.max(0, math.floor((burst - debt) / interval))
  local reset
  if debt > burst then
    reset = debt - burst + interval
  else
    reset = rl_until_next_unit(debt, interval)
  end
  return { 0, remaining, reset, wait, 0 }, nil
end

function gcra.refund(key, timestamp, capacity, interval, cost)
  local value = redis.call('GET', key)
  if not value then
    return
  end
  -- the debt is priced at the interval it was recorded with
  local sep = string.find(value, ':', 1, true)
  local tat, written = tonumber(value), interval
  if sep then
    tat, written = tonumber(string.sub(value, 1, sep - 1)), tonumber(string.sub(value, sep + 1))
  end
  if tat ~= nil and written ~= nil then
    redis.call('SET', key, rl_int(tat - cost * written) .. ':' .. rl_int(written), 'KEEPTTL')
  end
end

rl_algorithms.tb = {
  keys = 1,
  decide = function(k, now, capacity, interval, cost, max_delay)
    return gcra.decide(KEYS[k], now, capacity, interval, cost, 0, max_delay)
  end,
  refund = function(k, timestamp, capacity, interval, cost)
    gcra.refund(KEYS[k], timestamp, capacity, interval, cost)
  end,
}

-- standalone entry --
local now = rl_now(ARGV[1])
local capacity, interval, cost = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if ARGV[2] == 'refund' then
  gcra.refund(KEYS[1], now, capacity, interval, cost)
  return { now }
end
local decision, commit = gcra.decide(KEYS[1], now, capacity, interval, cost, tonumber(ARGV[6]),
  tonumber(ARGV[7] or '0'))
if commit then
  commit()
end
return { now, decision[1], decision[2], decision[3], decision[4], decision[5] }
