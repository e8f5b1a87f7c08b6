-- wrk script of scripts/bench.sh, a staff write (issue 40): POST /education-materials
-- with a JSON body (no files), a title of its own per request and one video.
--   wrk -s staff-material-create.lua URL -- ADMIN_TOKEN
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
  run = os.time()
end

function request()
  counter = counter + 1
  local k = counter * 64 + (tid or 0)
  headers["X-Forwarded-For"] = "13." .. (100 + (tid or 0)) .. "." .. math.floor(counter / 256) % 256 .. "." .. counter % 256
  local body = '{"title":"Bench material ' .. run .. "-" .. k .. '","description":"Greetings and introductions.",'
    .. '"level":"A2","targetLanguage":"de","locale":"en",'
    .. '"videos":[{"title":"Greetings","url":"https://video.example.com/greetings"}]}'
  return wrk.format("POST", "/education-materials", headers, body)
end
