-- wrk script for every run of scripts/bench.sh (baseline and endpoints alike, so the
-- client does the same work on both sides of a ratio).
--   wrk -s request.lua URL -- METHOD [TOKEN|-] [BODY_FILE|-]
-- Each request carries its own X-Forwarded-For from a pool of 65536 addresses per
-- thread, so no address comes near the per-route rate limits (120 a minute).
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
local counter = 0

function init(args)
  method = args[1] or "GET"
  headers = {}
  if args[2] and args[2] ~= "-" then
    headers["Authorization"] = "Bearer " .. args[2]
  end
  body = nil
  if args[3] and args[3] ~= "-" then
    local f = assert(io.open(args[3], "r"))
    body = f:read("*a")
    f:close()
    headers["Content-Type"] = "application/json"
  end
end

function request()
  counter = counter + 1
  local n = counter % 65536
  headers["X-Forwarded-For"] = client_address(10, 100 + (tid or 0), n)
  return wrk.format(method, nil, headers, body)
end
