-- wrk script of scripts/bench.sh for the staff writes (issue 40), one write a run:
--   wrk -s staff-write.lua URL -- WRITE ADMIN_TOKEN USERS COURSES FIRST_TEST TESTS MATERIALS CONTACTS ASSIGN_FIRST
-- WRITE is one of the names in `writes` below; the counts come from bench.env. Every
-- request is valid (each create has a title of its own, each assignment a new pair), so
-- the run measures the write and its audit entry, not a refusal. Ids are made as
-- langcamp_bench::id makes the seeded ones.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
local counter = 0

local function id(kind, n)
  return string.format("0190%02x00-0000-7000-8000-%012x", kind, n)
end

-- Ten questions of four options and a level range for each score, for new tests.
local function test_body_rest()
  local questions = {}
  for q = 0, 9 do
    questions[#questions + 1] = '{"text":"Question ' .. q .. ': choose the correct form.","options":'
      .. '[{"text":"der"},{"text":"die"},{"text":"das"},{"text":"den"}],"correctOptionIndex":' .. q % 4 .. '}'
  end
  return '","targetLanguage":"de","locale":"en","timeLimitMinutes":20,"questions":[' .. table.concat(questions, ",")
    .. '],"levelRanges":[{"level":"A1","minScore":0,"maxScore":1},{"level":"A2","minScore":2,"maxScore":3},'
    .. '{"level":"B1","minScore":4,"maxScore":5},{"level":"B2","minScore":6,"maxScore":7},'
    .. '{"level":"C1","minScore":8,"maxScore":9},{"level":"C2","minScore":10,"maxScore":10}]}'
end

-- Each write: the k-th request's method, path and body (`c` holds the counts).
local writes = {
  ["course-create"] = function(k, c)
    return "POST", "/courses", '{"title":"Bench course ' .. c.run .. "-" .. k .. '","summary":"Two weeks of lessons in the mornings.",'
      .. '"targetLanguage":"de","level":"B1","locale":"en","location":"Lisbon","startDate":"2027-07-01",'
      .. '"endDate":"2027-07-14","price":450,"currency":"EUR","capacity":12,"isPublished":false}'
  end,
  ["course-update"] = function(k, c)
    return "PATCH", "/courses/" .. id(2, k % c.courses),
      '{"summary":"Two weeks of lessons in the mornings, revision ' .. k .. '.","capacity":' .. (10 + k % 5) .. '}'
  end,
  ["test-create"] = function(k, c)
    return "POST", "/proficiency-tests", '{"title":"Bench test ' .. c.run .. "-" .. k .. c.test_rest
  end,
  ["test-update"] = function(k, c)
    local n = c.first_test + k % (c.tests - c.first_test)
    return "PATCH", "/proficiency-tests/" .. id(3, n),
      '{"title":"Placement test ' .. n .. ', revision ' .. k .. '","description":"Ten questions, twenty minutes."}'
  end,
  ["material-create"] = function(k, c)
    return "POST", "/education-materials", '{"title":"Bench material ' .. c.run .. "-" .. k .. '","description":"Greetings and introductions.",'
      .. '"level":"A2","targetLanguage":"de","locale":"en",'
      .. '"videos":[{"title":"Greetings","url":"https://video.example.com/greetings"}]}'
  end,
  -- One user a request, each pair of material and user new (the seed assigns only even
  -- users; these are odd ones), so every request assigns and sends its mail.
  ["material-assign"] = function(k, c)
    local pair = c.assign_first + k
    local user = (2 * math.floor(pair / c.materials) + 1) % c.users
    return "POST", "/education-materials/" .. id(6, pair % c.materials) .. "/assign", '{"userIds":["' .. id(1, user) .. '"]}'
  end,
  -- Students only: the seeded staff (every 1000th user) and the signed-in ones are left
  -- alone.
  ["user-profile"] = function(k, c)
    local n = 2 + k % (c.users - 2)
    while n % 1000 == 0 or n % 10000 == 1 do
      n = n + 1
    end
    return "PATCH", "/admin/users/" .. id(1, n % c.users) .. "/profile",
      '{"city":"Porto","phone":"91234' .. string.format("%04d", k % 10000) .. '","age":' .. (18 + k % 50) .. '}'
  end,
  -- The seeded contact requests in turn; each reply is mailed.
  ["contact-reply"] = function(k, c)
    return "POST", "/contact/admin/" .. id(5, k % c.contacts) .. "/reply",
      '{"replyMessage":"Thank you for asking.\\nThe summer courses start on 1 July; reply ' .. k .. '."}'
  end,
  ["contact-status"] = function(k, c)
    local status = ({ "IN_PROGRESS", "CLOSED", "PENDING" })[k % 3 + 1]
    return "PATCH", "/contact/admin/" .. id(5, k % c.contacts) .. "/status", '{"status":"' .. status .. '"}'
  end,
}

function init(args)
  write = assert(writes[args[1]], "staff-write.lua: unknown write " .. tostring(args[1]))
  headers = { ["Authorization"] = "Bearer " .. args[2], ["Content-Type"] = "application/json" }
  counts = {
    users = tonumber(args[3]), courses = tonumber(args[4]), first_test = tonumber(args[5]),
    tests = tonumber(args[6]), materials = tonumber(args[7]), contacts = tonumber(args[8]),
    assign_first = tonumber(args[9] or "0"),
    -- Titles of this run differ from earlier runs' too.
    run = os.time(), test_rest = test_body_rest(),
  }
end

function request()
  counter = counter + 1
  local k = counter * 64 + (tid or 0)
  headers["X-Forwarded-For"] = client_address(13, 100 + (tid or 0), counter)
  local method, path, body = write(k, counts)
  return wrk.format(method, path, headers, body)
end
