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

-- The scripts that walk numbered one-time codes or addresses (wrk -s SCRIPT URL -- FIRST
-- PER_THREAD): thread t sends numbers FIRST + t*PER_THREAD onwards, request n posts
-- body(n) as JSON from client address OCTET.x.y.z, with the extra headers given.
function numbered_posts(octet, body, extra_headers)
  local counter = 0
  function init(args)
    first = tonumber(args[1] or "0")
    per_thread = tonumber(args[2] or "25000")
    headers = { ["Content-Type"] = "application/json" }
    for name, value in pairs(extra_headers or {}) do
      headers[name] = value
    end
  end
  function request()
    local n = first + (tid or 0) * per_thread + counter
    counter = counter + 1
    headers["X-Forwarded-For"] = client_address(octet, math.floor(n / 65536) % 256, n)
    return wrk.format("POST", nil, headers, body(n))
  end
end
