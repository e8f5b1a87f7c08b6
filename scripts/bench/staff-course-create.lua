-- wrk script of scripts/bench.sh, a staff write (issue 40): POST /courses, a new course
-- with a title of its own per request.
--   wrk -s staff-course-create.lua URL -- ADMIN_TOKEN
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
  -- Titles of this run differ from earlier runs' too.
  run = os.time()
end

function request()
  counter = counter + 1
  local k = counter * 64 + (tid or 0)
  headers["X-Forwarded-For"] = "13." .. (100 + (tid or 0)) .. "." .. math.floor(counter / 256) % 256 .. "." .. counter % 256
  local body = '{"title":"Bench course ' .. run .. "-" .. k .. '","summary":"Two weeks of lessons in the mornings.",'
    .. '"targetLanguage":"de","level":"B1","locale":"en","location":"Lisbon","startDate":"2027-07-01",'
    .. '"endDate":"2027-07-14","price":450,"currency":"EUR","capacity":12,"isPublished":false}'
  return wrk.format("POST", "/courses", headers, body)
end
