-- wrk script for POST /auth/otp/verify: walks through the one-time codes that
-- `api-bench seed` prepared (otp<N>@bench.langcamp.test, code 123456), each used once.
--   wrk -s otp.lua URL -- FIRST PER_THREAD
-- Thread t takes codes FIRST + t*PER_THREAD ...; each request comes from its own address.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
local counter = 0

function init(args)
  first = tonumber(args[1] or "0")
  per_thread = tonumber(args[2] or "25000")
  headers = { ["Content-Type"] = "application/json" }
end

function request()
  local n = first + (tid or 0) * per_thread + counter
  counter = counter + 1
  headers["X-Forwarded-For"] = client_address(11, math.floor(n / 65536) % 256, n)
  local body = '{"email":"otp' .. n .. '@bench.langcamp.test","code":"123456"}'
  return wrk.format("POST", nil, headers, body)
end
