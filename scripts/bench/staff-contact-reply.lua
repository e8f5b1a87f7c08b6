-- wrk script of scripts/bench.sh, a staff write (issue 40): POST
-- /contact/admin/{id}/reply, the seeded contact requests in turn (each reply is
-- mailed).
--   wrk -s staff-contact-reply.lua URL -- ADMIN_TOKEN CONTACTS
-- (the counts from bench.env; up to 64 wrk threads). Every request is valid and comes
-- from a client address of its own, like request.lua's, so no rate limit answers in its
-- place. Ids are made as langcamp_bench::id makes the seeded ones.
local counter = 0
local threads = 0

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

local function id(kind, n)
  return string.format("0190%02x00-0000-7000-8000-%012x", kind, n)
end

function init(args)
  headers = { ["Authorization"] = "Bearer " .. args[1], ["Content-Type"] = "application/json" }
  contacts = tonumber(args[2])
end

function request()
  counter = counter + 1
  local k = counter * 64 + (tid or 0)
  headers["X-Forwarded-For"] = "13." .. (100 + (tid or 0)) .. "." .. math.floor(counter / 256) % 256 .. "." .. counter % 256
  local body = '{"replyMessage":"Thank you for asking.\\nThe summer courses start on 1 July; reply ' .. k .. '."}'
  return wrk.format("POST", "/contact/admin/" .. id(5, k % contacts) .. "/reply", headers, body)
end
