-- wrk script for POST /auth/otp/request: each request asks a code for an address of its
-- own (otp-request<N>@bench.langcamp.test, never seen before, so its mail is rendered in
-- the Accept-Language given here: German, through the locale resolution), from a client
-- address of its own, so neither the per-address cap nor the rate limits answer.
--   wrk -s otp-request.lua URL -- FIRST PER_THREAD
local counter = 0
local threads = 0

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

function init(args)
  first = tonumber(args[1] or "0")
  per_thread = tonumber(args[2] or "25000")
  headers = { ["Content-Type"] = "application/json", ["Accept-Language"] = "de-AT,de;q=0.9" }
end

function request()
  local n = first + (tid or 0) * per_thread + counter
  counter = counter + 1
  headers["X-Forwarded-For"] = "12." .. math.floor(n / 65536) % 256 .. "." .. math.floor(n / 256) % 256 .. "." .. n % 256
  local body = '{"email":"otp-request' .. n .. '@bench.langcamp.test"}'
  return wrk.format("POST", nil, headers, body)
end
