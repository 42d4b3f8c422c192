-- lib.lua: helpers shared by every rate limit script, and the table the drivers dispatch
-- on; prepended when scripts are composed. Not a script of its own: it names no KEYS, takes
-- no ARGV and replies nothing.
--
-- Numbers are Lua doubles. Every value these scripts compute (microsecond timestamps,
-- capacities, products of a capacity and a period) stays below 2^53, where doubles are
-- exact integers, and the formulas are written in the same order as the Java in-memory
-- store, so both stores make the same decision for the same (time, cost).

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
-- since Redis expires keys in real time while their clock stands still.
local rl_min_ttl = 1

-- A TTL in whole milliseconds, rounded up, at least rl_min_ttl.
local function rl_ttl(micros)
  local ms = math.ceil(micros / 1000)
  if ms < rl_min_ttl then
    ms = rl_min_ttl
  end
  return ms
end

-- Time until a debt of `debt` microseconds shrinks by one whole unit of `interval`.
local function rl_until_next_unit(debt, interval)
  if debt <= 0 then
    return 0
  end
  return ((debt - 1) % interval) + 1
end

-- The algorithms, by the code the drivers receive (tb, lb, fw, swl, swc). Each algorithm
-- script registers itself here, and acquire.lua and inspect.lua dispatch on it. An entry:
--   keys    how many KEYS a bucket takes, from its first key k on
--   decide  function(k, now, capacity, param, cost, max_delay) returning the decision
--           {allowed (1|0), remaining, reset_us, retry_after_us, delay_us} and, when it
--           admits, a function that commits it (nil otherwise). It writes nothing itself,
--           apart from dropping state that no longer counts. max_delay is the longest wait
--           for a reserved slot (0: none); algorithms that cannot reserve ignore it.
--   refund  function(k, timestamp, capacity, param, cost) giving back an acquisition made
--           at `timestamp`
-- param is the emission interval in microseconds for the buckets, the period otherwise.
local rl_algorithms = {}
