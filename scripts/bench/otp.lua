-- wrk script for POST /auth/otp/verify: walks through the one-time codes that
-- `api-bench seed` prepared (otp<N>@bench.langcamp.test, code 123456), each used once.
--   wrk -s otp.lua URL -- FIRST PER_THREAD
-- Thread t takes codes FIRST + t*PER_THREAD ...; each request comes from its own address.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
numbered_posts(11, function(n)
  return '{"email":"otp' .. n .. '@bench.langcamp.test","code":"123456"}'
end)
