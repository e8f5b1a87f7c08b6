-- wrk script of scripts/bench.sh, a staff write (issue 40): POST /proficiency-tests, a
-- fixed test of ten questions (four options each) and six level ranges, with a title of
-- its own per request.
--   wrk -s staff-test-create.lua URL -- ADMIN_TOKEN
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
  local questions = {}
  for q = 0, 9 do
    questions[#questions + 1] = '{"text":"Question ' .. q .. ': choose the correct form.","options":'
      .. '[{"text":"der"},{"text":"die"},{"text":"das"},{"text":"den"}],"correctOptionIndex":' .. q % 4 .. '}'
  end
  rest = '","targetLanguage":"de","locale":"en","timeLimitMinutes":20,"questions":[' .. table.concat(questions, ",")
    .. '],"levelRanges":[{"level":"A1","minScore":0,"maxScore":1},{"level":"A2","minScore":2,"maxScore":3},'
    .. '{"level":"B1","minScore":4,"maxScore":5},{"level":"B2","minScore":6,"maxScore":7},'
    .. '{"level":"C1","minScore":8,"maxScore":9},{"level":"C2","minScore":10,"maxScore":10}]}'
end

function request()
  counter = counter + 1
  local k = counter * 64 + (tid or 0)
  headers["X-Forwarded-For"] = "13." .. (100 + (tid or 0)) .. "." .. math.floor(counter / 256) % 256 .. "." .. counter % 256
  return wrk.format("POST", "/proficiency-tests", headers, '{"title":"Bench test ' .. run .. "-" .. k .. rest)
end
