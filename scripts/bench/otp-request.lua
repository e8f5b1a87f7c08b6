-- wrk script for POST /auth/otp/request: each request asks a code for an address of its
-- own (otp-request<N>@bench.langcamp.test, never seen before, so its mail is rendered in
-- the Accept-Language given here: German, through the locale resolution), from a client
-- address of its own, so neither the per-address cap nor the rate limits answer.
--   wrk -s otp-request.lua URL -- FIRST PER_THREAD
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
local counter = 0

function init(args)
  first = tonumber(args[1] or "0")
  per_thread = tonumber(args[2] or "25000")
  headers = { ["Content-Type"] = "application/json", ["Accept-Language"] = "de-AT,de;q=0.9" }
end

function request()
  local n = first + (tid or 0) * per_thread + counter
  counter = counter + 1
  headers["X-Forwarded-For"] = client_address(12, math.floor(n / 65536) % 256, n)
  local body = '{"email":"otp-request' .. n .. '@bench.langcamp.test"}'
  return wrk.format("POST", nil, headers, body)
end
