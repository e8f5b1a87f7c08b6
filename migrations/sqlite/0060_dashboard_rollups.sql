-- Rollups for the admin dashboard (CONTRACT §11), so that its whole-table figures are a
-- read of a few hundred rows however many users, results, contacts and assignments exist.
--
-- Triggers keep them exact: they change in the same transaction as the rows they count,
-- including deletions by ON DELETE CASCADE, which run no application code. SQLite has one
-- writer at a time, so the read-modify-write of a counter never interleaves with another.
-- The same tables and meanings exist on PostgreSQL (migrations/postgres/0060); the
-- dashboard's queries, `langcamp stats check` and `langcamp stats rebuild` are shared.
--
-- Times before 1970 are not bucketed correctly (`t - t % day` rounds them up); the
-- application never writes one.

-- Whole-table counts, by name:
--   users.role.<role>         users holding the role
--   users.completed           users with is_registration_complete = 1
--   contacts.status.<status>  contacts in the status
--   assignments               material assignments
--   assignments.holders       users holding at least one material assignment
CREATE TABLE stats_counts (
    name TEXT NOT NULL PRIMARY KEY,
    n BIGINT NOT NULL
) WITHOUT ROWID;

-- Material assignments per user holding any: a user becomes a holder when their count
-- goes from 0 to 1, and stops being one when it returns to 0 (the row is then removed).
-- (No foreign key: the rows follow the assignments, whose deletion cascades from users.)
CREATE TABLE stats_holdings (
    user_id TEXT NOT NULL PRIMARY KEY,
    n BIGINT NOT NULL
) WITHOUT ROWID;

-- Placement results by level and target language ('' when the test named none).
CREATE TABLE stats_results (
    level TEXT NOT NULL,
    target_language TEXT NOT NULL,
    submissions BIGINT NOT NULL,
    score_sum BIGINT NOT NULL,
    PRIMARY KEY (level, target_language)
) WITHOUT ROWID;

-- Rows per UTC day (day = midnight in epoch milliseconds) of each series: users
-- (created_at), results (completed_at), contacts (created_at), assignments (assigned_at).
-- A calendar month is a union of whole days, so a trend point is a sum of about 30 rows.
CREATE TABLE stats_days (
    day BIGINT NOT NULL,
    series TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (day, series)
) WITHOUT ROWID;

-- Users.

CREATE TRIGGER stats_users_insert AFTER INSERT ON users BEGIN
    INSERT INTO stats_counts (name, n) VALUES ('users.role.' || NEW.role, 1)
        ON CONFLICT (name) DO UPDATE SET n = n + excluded.n;
    INSERT INTO stats_counts (name, n) VALUES ('users.completed', NEW.is_registration_complete)
        ON CONFLICT (name) DO UPDATE SET n = n + excluded.n;
    INSERT INTO stats_days (day, series, n) VALUES (NEW.created_at - NEW.created_at % 86400000, 'users', 1)
        ON CONFLICT (day, series) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER stats_users_delete AFTER DELETE ON users BEGIN
    UPDATE stats_counts SET n = n - 1 WHERE name = 'users.role.' || OLD.role;
    UPDATE stats_counts SET n = n - OLD.is_registration_complete WHERE name = 'users.completed';
    UPDATE stats_days SET n = n - 1
        WHERE day = OLD.created_at - OLD.created_at % 86400000 AND series = 'users';
END;

CREATE TRIGGER stats_users_role AFTER UPDATE OF role ON users
WHEN OLD.role <> NEW.role BEGIN
    UPDATE stats_counts SET n = n - 1 WHERE name = 'users.role.' || OLD.role;
    INSERT INTO stats_counts (name, n) VALUES ('users.role.' || NEW.role, 1)
        ON CONFLICT (name) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER stats_users_completed AFTER UPDATE OF is_registration_complete ON users
WHEN OLD.is_registration_complete <> NEW.is_registration_complete BEGIN
    INSERT INTO stats_counts (name, n)
        VALUES ('users.completed', NEW.is_registration_complete - OLD.is_registration_complete)
        ON CONFLICT (name) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER stats_users_created_at AFTER UPDATE OF created_at ON users
WHEN OLD.created_at <> NEW.created_at BEGIN
    UPDATE stats_days SET n = n - 1
        WHERE day = OLD.created_at - OLD.created_at % 86400000 AND series = 'users';
    INSERT INTO stats_days (day, series, n) VALUES (NEW.created_at - NEW.created_at % 86400000, 'users', 1)
        ON CONFLICT (day, series) DO UPDATE SET n = n + excluded.n;
END;

-- Placement results: written once, removed with their user.

CREATE TRIGGER stats_results_insert AFTER INSERT ON test_results BEGIN
    INSERT INTO stats_results (level, target_language, submissions, score_sum)
        VALUES (NEW.level, COALESCE(NEW.target_language, ''), 1, NEW.total_score)
        ON CONFLICT (level, target_language) DO UPDATE
        SET submissions = submissions + excluded.submissions, score_sum = score_sum + excluded.score_sum;
    INSERT INTO stats_days (day, series, n) VALUES (NEW.completed_at - NEW.completed_at % 86400000, 'results', 1)
        ON CONFLICT (day, series) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER stats_results_delete AFTER DELETE ON test_results BEGIN
    UPDATE stats_results SET submissions = submissions - 1, score_sum = score_sum - OLD.total_score
        WHERE level = OLD.level AND target_language = COALESCE(OLD.target_language, '');
    UPDATE stats_days SET n = n - 1
        WHERE day = OLD.completed_at - OLD.completed_at % 86400000 AND series = 'results';
END;

-- No WHEN clause: an update that changes none of the four columns removes and adds the
-- same counts, which nets to nothing.
CREATE TRIGGER stats_results_update AFTER UPDATE OF level, target_language, total_score, completed_at ON test_results BEGIN
    UPDATE stats_results SET submissions = submissions - 1, score_sum = score_sum - OLD.total_score
        WHERE level = OLD.level AND target_language = COALESCE(OLD.target_language, '');
    INSERT INTO stats_results (level, target_language, submissions, score_sum)
        VALUES (NEW.level, COALESCE(NEW.target_language, ''), 1, NEW.total_score)
        ON CONFLICT (level, target_language) DO UPDATE
        SET submissions = submissions + excluded.submissions, score_sum = score_sum + excluded.score_sum;
    UPDATE stats_days SET n = n - 1
        WHERE day = OLD.completed_at - OLD.completed_at % 86400000 AND series = 'results';
    INSERT INTO stats_days (day, series, n) VALUES (NEW.completed_at - NEW.completed_at % 86400000, 'results', 1)
        ON CONFLICT (day, series) DO UPDATE SET n = n + excluded.n;
END;

-- Contacts.

CREATE TRIGGER stats_contacts_insert AFTER INSERT ON contacts BEGIN
    INSERT INTO stats_counts (name, n) VALUES ('contacts.status.' || NEW.status, 1)
        ON CONFLICT (name) DO UPDATE SET n = n + excluded.n;
    INSERT INTO stats_days (day, series, n) VALUES (NEW.created_at - NEW.created_at % 86400000, 'contacts', 1)
        ON CONFLICT (day, series) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER stats_contacts_delete AFTER DELETE ON contacts BEGIN
    UPDATE stats_counts SET n = n - 1 WHERE name = 'contacts.status.' || OLD.status;
    UPDATE stats_days SET n = n - 1
        WHERE day = OLD.created_at - OLD.created_at % 86400000 AND series = 'contacts';
END;

CREATE TRIGGER stats_contacts_status AFTER UPDATE OF status ON contacts
WHEN OLD.status <> NEW.status BEGIN
    UPDATE stats_counts SET n = n - 1 WHERE name = 'contacts.status.' || OLD.status;
    INSERT INTO stats_counts (name, n) VALUES ('contacts.status.' || NEW.status, 1)
        ON CONFLICT (name) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER stats_contacts_created_at AFTER UPDATE OF created_at ON contacts
WHEN OLD.created_at <> NEW.created_at BEGIN
    UPDATE stats_days SET n = n - 1
        WHERE day = OLD.created_at - OLD.created_at % 86400000 AND series = 'contacts';
    INSERT INTO stats_days (day, series, n) VALUES (NEW.created_at - NEW.created_at % 86400000, 'contacts', 1)
        ON CONFLICT (day, series) DO UPDATE SET n = n + excluded.n;
END;

-- Material assignments.

CREATE TRIGGER stats_assignments_insert AFTER INSERT ON material_assignments BEGIN
    INSERT INTO stats_counts (name, n) VALUES ('assignments', 1)
        ON CONFLICT (name) DO UPDATE SET n = n + excluded.n;
    INSERT INTO stats_days (day, series, n) VALUES (NEW.assigned_at - NEW.assigned_at % 86400000, 'assignments', 1)
        ON CONFLICT (day, series) DO UPDATE SET n = n + excluded.n;
    INSERT INTO stats_holdings (user_id, n) VALUES (NEW.user_id, 1)
        ON CONFLICT (user_id) DO UPDATE SET n = n + excluded.n;
    UPDATE stats_counts SET n = n + 1
        WHERE name = 'assignments.holders'
          AND (SELECT n FROM stats_holdings WHERE user_id = NEW.user_id) = 1;
END;

CREATE TRIGGER stats_assignments_delete AFTER DELETE ON material_assignments BEGIN
    UPDATE stats_counts SET n = n - 1 WHERE name = 'assignments';
    UPDATE stats_days SET n = n - 1
        WHERE day = OLD.assigned_at - OLD.assigned_at % 86400000 AND series = 'assignments';
    UPDATE stats_holdings SET n = n - 1 WHERE user_id = OLD.user_id;
    UPDATE stats_counts SET n = n - 1
        WHERE name = 'assignments.holders'
          AND (SELECT n FROM stats_holdings WHERE user_id = OLD.user_id) = 0;
    DELETE FROM stats_holdings WHERE user_id = OLD.user_id AND n = 0;
END;

CREATE TRIGGER stats_assignments_user_id AFTER UPDATE OF user_id ON material_assignments
WHEN OLD.user_id <> NEW.user_id BEGIN
    UPDATE stats_holdings SET n = n - 1 WHERE user_id = OLD.user_id;
    UPDATE stats_counts SET n = n - 1
        WHERE name = 'assignments.holders'
          AND (SELECT n FROM stats_holdings WHERE user_id = OLD.user_id) = 0;
    DELETE FROM stats_holdings WHERE user_id = OLD.user_id AND n = 0;
    INSERT INTO stats_holdings (user_id, n) VALUES (NEW.user_id, 1)
        ON CONFLICT (user_id) DO UPDATE SET n = n + excluded.n;
    UPDATE stats_counts SET n = n + 1
        WHERE name = 'assignments.holders'
          AND (SELECT n FROM stats_holdings WHERE user_id = NEW.user_id) = 1;
END;

CREATE TRIGGER stats_assignments_assigned_at AFTER UPDATE OF assigned_at ON material_assignments
WHEN OLD.assigned_at <> NEW.assigned_at BEGIN
    UPDATE stats_days SET n = n - 1
        WHERE day = OLD.assigned_at - OLD.assigned_at % 86400000 AND series = 'assignments';
    INSERT INTO stats_days (day, series, n) VALUES (NEW.assigned_at - NEW.assigned_at % 86400000, 'assignments', 1)
        ON CONFLICT (day, series) DO UPDATE SET n = n + excluded.n;
END;

-- Fill them from the rows that exist: the recounts of `langcamp stats rebuild`
-- (langcamp-core/src/dashboard/rollups.rs; a unit test keeps the two the same).

INSERT INTO stats_counts (name, n)
    SELECT 'users.role.' || role AS name, COUNT(*) AS n FROM users GROUP BY role;
INSERT INTO stats_counts (name, n)
    SELECT 'users.completed' AS name, COUNT(*) AS n FROM users WHERE is_registration_complete = 1;
INSERT INTO stats_counts (name, n)
    SELECT 'contacts.status.' || status AS name, COUNT(*) AS n FROM contacts GROUP BY status;
INSERT INTO stats_counts (name, n)
    SELECT 'assignments' AS name, COUNT(*) AS n FROM material_assignments;
INSERT INTO stats_counts (name, n)
    SELECT 'assignments.holders' AS name, COUNT(*) AS n FROM (SELECT user_id FROM material_assignments GROUP BY user_id) holders;
INSERT INTO stats_holdings (user_id, n)
    SELECT user_id, COUNT(*) AS n FROM material_assignments GROUP BY user_id;
INSERT INTO stats_results (level, target_language, submissions, score_sum)
    SELECT level, COALESCE(target_language, '') AS target_language, COUNT(*) AS submissions, CAST(SUM(total_score) AS BIGINT) AS score_sum FROM test_results GROUP BY level, COALESCE(target_language, '');
INSERT INTO stats_days (day, series, n)
    SELECT created_at - created_at % 86400000 AS day, 'users' AS series, COUNT(*) AS n FROM users GROUP BY created_at - created_at % 86400000;
INSERT INTO stats_days (day, series, n)
    SELECT completed_at - completed_at % 86400000 AS day, 'results' AS series, COUNT(*) AS n FROM test_results GROUP BY completed_at - completed_at % 86400000;
INSERT INTO stats_days (day, series, n)
    SELECT created_at - created_at % 86400000 AS day, 'contacts' AS series, COUNT(*) AS n FROM contacts GROUP BY created_at - created_at % 86400000;
INSERT INTO stats_days (day, series, n)
    SELECT assigned_at - assigned_at % 86400000 AS day, 'assignments' AS series, COUNT(*) AS n FROM material_assignments GROUP BY assigned_at - assigned_at % 86400000;

-- The distribution pass now reads stats_results; the covering index only cost writes.
DROP INDEX test_results_level_target_language_total_score_idx;
