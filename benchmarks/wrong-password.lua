-- wrk script for benchmarks/guessing-bench.sh: every request carries HTTP Basic
-- credentials for alice with a wrong password, and the answers are counted by status.
-- WRK_PACE_MS > 0 makes each connection wait that long before its next request.
wrk.headers["Authorization"] = "Basic YWxpY2U6d3JvbmctcGFzc3dvcmQ=" -- alice:wrong-password

local pace = tonumber(os.getenv("WRK_PACE_MS") or "0")
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  statuses = {}
end

if pace > 0 then
  function delay()
    return pace
  end
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      total[status] = (total[status] or 0) + count
    end
  end
  for status, count in pairs(total) do
    io.write(string.format("status %d %d\n", status, count))
  end
end
