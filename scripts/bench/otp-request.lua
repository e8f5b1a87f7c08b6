-- wrk script for POST /auth/otp/request: each request asks a code for an address of its
-- own (otp-request<N>@bench.langcamp.test, never seen before, so its mail is rendered in
-- the Accept-Language given here: German, through the locale resolution), from a client
-- address of its own, so neither the per-address cap nor the rate limits answer.
--   wrk -s otp-request.lua URL -- FIRST PER_THREAD
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
numbered_posts(12, function(n)
  return '{"email":"otp-request' .. n .. '@bench.langcamp.test"}'
end, { ["Accept-Language"] = "de-AT,de;q=0.9" })
