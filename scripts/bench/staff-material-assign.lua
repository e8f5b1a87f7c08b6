-- wrk script of scripts/bench.sh, a staff write (issue 40): POST /education-
-- materials/{id}/assign, one user a request, each pair of material and user new (the
-- seed assigns only even users; these are odd ones), so every request assigns and sends
-- its mail.
--   wrk -s staff-material-assign.lua URL -- ADMIN_TOKEN USERS MATERIALS FIRST
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
  materials = tonumber(args[3])
  first = tonumber(args[4] or "0")
end

function request()
  counter = counter + 1
  local k = counter * 64 + (tid or 0)
  headers["X-Forwarded-For"] = "13." .. (100 + (tid or 0)) .. "." .. math.floor(counter / 256) % 256 .. "." .. counter % 256
  local pair = first + k
  local user = (2 * math.floor(pair / materials) + 1) % users
  local body = '{"userIds":["' .. id(1, user) .. '"]}'
  return wrk.format("POST", "/education-materials/" .. id(6, pair % materials) .. "/assign", headers, body)
end
