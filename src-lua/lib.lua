-- lib.lua: helpers shared by every rate limit script, and the table the drivers dispatch
-- on; prepended when scripts are composed. Not a script of its own: it names no KEYS, takes
-- no ARGV and replies nothing.
--
-- Numbers are Lua doubles. Every value these scripts compute (microsecond timestamps,
-- capacities, products of a capacity and a period) stays below 2^53, where doubles are
-- exact integers, and the formulas are written in the same order as the Java in-memory
-- store, so both stores make the same decision for the same (time, cost).
--
-- Run with EVAL, Redis runs the whole composed script on every call, so everything its top
-- level defines is defined again for every request: each function is a closure made anew,
-- each table allocated anew. The algorithms therefore register a function that defines
-- them, and a call defines only the algorithms it uses (rl_algorithm); and a script is
-- composed with only the helpers below that its algorithms and driver use. Each helper is a
-- paragraph of its own (its comment and its definition, no blank line inside), which
-- composing keeps when a kept script or a kept helper names what it defines.
-- On Redis 7 and later the store loads the acquiring script as a function library instead
-- (FUNCTION LOAD, then FCALL): the top level runs once, when the library is loaded, the
-- driver on every call, with KEYS and ARGV locals of the library that each call sets. State
-- kept here then outlives a call, so the driver sets what is per call (rl_min_ttl,
-- rl_fields) on every call.

-- Current time in microseconds: the explicit value when one is given (tests), else Redis TIME.
local function rl_now(arg)
  if arg ~= nil and arg ~= '' then
    return tonumber(arg)
  end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- An exact integer as a string (tostring would print 1.7e+15).
local function rl_int(x)
  return string.format('%d', x)
end

-- Least TTL in milliseconds. 1 in production; tests that pass an explicit `now` raise it,
-- since Redis expires keys in real time while their clock stands still. The acquiring
-- driver sets it on every call.
local RL_MIN_TTL = 1
local rl_min_ttl = RL_MIN_TTL

-- A TTL in whole milliseconds, rounded up, at least rl_min_ttl.
local function rl_ttl(micros)
  local ms = math.ceil(micros / 1000)
  if ms < rl_min_ttl then
    ms = rl_min_ttl
  end
  return ms
end

-- Buckets kept as fields of a hash (the hash-per-slot key layout): the field of the bucket
-- whose first key is KEYS[k], set by the driver from its arguments for every bucket of a
-- call; nil for a bucket that is a key of its own. Only algorithms whose value begins with the time it stops mattering (a
-- signed big-endian 7-byte integer of microseconds) are kept in a hash: the hash's TTL and
-- the pruning of its fields read that time.
local rl_fields = {}

-- The value of the bucket at KEYS[k], or false when there is none: the key's, or for a bucket
-- kept in a hash the field's.
local function rl_read(k)
  local field = rl_fields[k]
  if field == nil then
    return redis.call('GET', KEYS[k])
  end
  return redis.call('HGET', KEYS[k], field)
end

-- Whether the bucket at KEYS[k] exists (1|0), as a key or as a field of a hash.
local function rl_exists(k)
  local field = rl_fields[k]
  return field and redis.call('HEXISTS', KEYS[k], field) or redis.call('EXISTS', KEYS[k])
end

-- Number of fields a new field samples, dropping those no longer mattering: a hash whose
-- fields all end up unused holds about 1.5 times its live ones (a new field removes three
-- times the dead share on average), and expires with its last live field.
local RL_PRUNE_SAMPLE = 3

-- Writes the bucket at KEYS[k]. With `expires` (microseconds) the bucket lasts until then:
-- a key of its own expires then, a hash lives at least as long; without it the key keeps its
-- TTL (a refund, which only moves the end earlier).
local function rl_write(k, now, value, expires)
  local field = rl_fields[k]
  local key = KEYS[k]
  if field == nil then
    if expires == nil then
      return redis.call('SET', key, value, 'KEEPTTL')
    end
    return redis.call('SET', key, value, 'PX', rl_ttl(expires - now))
  end
  local added = redis.call('HSET', key, field, value)
  if expires == nil then
    return
  end
  local ttl = rl_ttl(expires - now)
  if redis.call('PTTL', key) < ttl then
    redis.call('PEXPIRE', key, ttl)
  end
  if added == 1 then
    local sample = redis.call('HRANDFIELD', key, RL_PRUNE_SAMPLE, 'WITHVALUES')
    for i = 1, #sample, 2 do
      local other = sample[i + 1]
      if sample[i] ~= field and (#other < 7 or struct.unpack('>i7', other) <= now) then
        redis.call('HDEL', key, sample[i])
      end
    end
  end
end

-- The algorithms, by the code the drivers receive (tb, lb, fw, swl, swc, cc): each algorithm
-- script registers a function returning its entry, which rl_algorithm calls on first use,
-- and acquire.lua and inspect.lua dispatch on the entries. An entry:
--   keys    how many KEYS a bucket takes, from its first key k on
--   decide  function(k, now, capacity, param, cost, max_delay) returning the decision,
--           allowed (1|0), remaining, reset_us, retry_after_us, delay_us, and when it
--           admits the state its commit writes. It writes nothing itself, apart from
--           dropping state that no longer counts. max_delay is the longest wait for a
--           reserved slot (0: none); algorithms that cannot reserve ignore it.
--   commit  function(k, now, capacity, param, cost, state) recording an admitted decision
--           with the state its decide returned
--   refund  function(k, timestamp, capacity, param, cost, logged) giving back `cost` units of
--           an acquisition made at `timestamp`; `logged` is what the acquisition took when
--           less than all of it is given back (a settlement, see acquire.lua), else nil
--   charge  function(k, now, capacity, param, cost) taking `cost` units at `now` without
--           deciding, even beyond the capacity (a debt: a settlement's actual cost exceeded
--           its reservation); the state written lasts until the debt no longer counts
-- param is the emission interval in microseconds for the buckets, the period otherwise;
-- for a calendar quota (a fixed window per calendar day, week or month in a time zone) it
-- is the list of window boundaries rl_parameter reads.
local rl_algorithms = {}

-- A limit's parameter as the drivers receive it: a number, or for a calendar quota the
-- boundaries of its windows around the application's present, as increasing epoch
-- microseconds separated by spaces ("<previous> <current> <next> <after next>"), which the
-- application computes with its time zone rules, since Redis has none. Returns a number or
-- a list of numbers.
local function rl_parameter(text)
  local param = tonumber(text)
  if param ~= nil then
    return param
  end
  local boundaries = {}
  for boundary in string.gmatch(text, '%-?%d+') do
    boundaries[#boundaries + 1] = tonumber(boundary)
  end
  return boundaries
end

-- The entry of an algorithm, defined on first use; nil for an unknown code.
local function rl_algorithm(code)
  local entry = rl_algorithms[code]
  if type(entry) == 'function' then
    entry = entry()
    rl_algorithms[code] = entry
  end
  return entry
end
