-- What every wrk script of scripts/bench.sh shares, loaded first by each:
--   dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
-- wrk numbers its threads here (setup runs once per thread, in the main Lua state), and
-- each request names a client address of its own in X-Forwarded-For, so the per-client
-- rate limits never answer in the measured route's place.
local threads = 0

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

-- FIRST.SECOND.x.y, x.y from n (a request's number); FIRST keeps each script's addresses
-- apart from the others'.
function client_address(first, second, n)
  return first .. "." .. second .. "." .. math.floor(n / 256) % 256 .. "." .. n % 256
end
