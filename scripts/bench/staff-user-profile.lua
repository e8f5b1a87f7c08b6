-- wrk script of scripts/bench.sh, a staff write (issue 40): PATCH
-- /admin/users/{id}/profile, the seeded students in turn (not the staff among them:
-- only a superadmin edits those).
--   wrk -s staff-user-profile.lua URL -- ADMIN_TOKEN USERS
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
  users = tonumber(args[2])
end

function request()
  counter = counter + 1
  local k = counter * 64 + (tid or 0)
  headers["X-Forwarded-For"] = "13." .. (100 + (tid or 0)) .. "." .. math.floor(counter / 256) % 256 .. "." .. counter % 256
  local n = 2 + k % (users - 2)
  while n % 1000 == 0 or n % 10000 == 1 do
    n = n + 1
  end
  local body = '{"city":"Porto","phone":"91234' .. string.format("%04d", k % 10000) .. '","age":' .. (18 + k % 50) .. '}'
  return wrk.format("PATCH", "/admin/users/" .. id(1, n % users) .. "/profile", headers, body)
end
