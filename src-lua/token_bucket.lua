-- token_bucket.lua: token bucket, kept as one timestamp (GCRA); leaky_bucket.lua runs the
-- same functions with ARGV[6] = 1.
--
-- KEYS[1]  bucket key; 12 bytes: the time (microseconds) at which the bucket is full
--          again (leaky bucket: the time its queue is empty again), a signed big-endian
--          7-byte integer, then the emission interval it was computed with, an unsigned
--          big-endian 5-byte integer (7 bytes, so 14 in all, for intervals of 2^40 µs, about
--          12.7 days, and more). A value of another size is read as no bucket.
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

rl_algorithms.tb = function()
  -- The time the bucket is full again as stored, and the interval it was written with.
  local function read(key)
    local value = redis.call('GET', key)
    if not value then
      return nil, nil
    end
    local size = #value
    if size == 12 then
      return struct.unpack('>i7I5', value)
    elseif size == 14 then
      return struct.unpack('>i7I7', value)
    end
    return nil, nil
  end

  local function encode(tat, interval)
    if interval < 1099511627776 then
      return struct.pack('>i7I5', tat, interval)
    end
    return struct.pack('>i7I7', tat, interval)
  end

  -- Time until a debt of `debt` microseconds shrinks by one whole interval.
  local function until_next_unit(debt, interval)
    if debt <= 0 then
      return 0
    end
    return ((debt - 1) % interval) + 1
  end

  -- leaky: 1 for a leaky bucket, whose admitted requests wait for their drain slot
  local function decide(k, now, capacity, interval, cost, max_delay, leaky)
    local key = KEYS[k]
    local burst = capacity * interval
    local start = now
    local tat, written = read(key)
    if tat ~= nil and tat > now then
      if written ~= interval then
        tat = now + math.ceil((tat - now) * interval / written)
      end
      start = tat
    end
    local new_tat = start + cost * interval
    local commit = function()
      redis.call('SET', key, encode(new_tat, interval), 'PX', rl_ttl(new_tat - now))
    end
    if new_tat - now <= burst then
      local debt = new_tat - now
      local delay = 0
      if leaky == 1 then
        delay = start - now
      end
      return 1, math.floor((burst - debt) / interval), until_next_unit(debt, interval), 0, delay, commit
    end
    local wait = new_tat - burst - now
    if max_delay ~= nil and max_delay > 0 then
      local delay = wait
      if leaky == 1 then
        delay = start - now
      end
      if delay <= max_delay then
        -- nothing is left until the bucket has drained past this reservation
        return 1, 0, wait + interval, 0, delay, commit
      end
    end
    local debt = start - now
    local reset
    if debt > burst then
      reset = debt - burst + interval
    else
      reset = until_next_unit(debt, interval)
    end
    return 0, math.max(0, math.floor((burst - debt) / interval)), reset, wait, 0, nil
  end

  local function refund(k, timestamp, capacity, interval, cost)
    local key = KEYS[k]
    -- the debt is priced at the interval it was recorded with
    local tat, written = read(key)
    if tat ~= nil then
      redis.call('SET', key, encode(tat - cost * written, written), 'KEEPTTL')
    end
  end

  return { keys = 1, decide = decide, refund = refund }
end

-- standalone entry --
if ARGV[6] == '1' then
  return rl_standalone('lb', 7)
end
return rl_standalone('tb', 7)
