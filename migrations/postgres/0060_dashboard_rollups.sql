-- Rollups for the admin dashboard (CONTRACT §11), so that its whole-table figures are a
-- read of a few hundred rows however many users, results, contacts and assignments exist.
--
-- Triggers keep them exact: they change in the same transaction as the rows they count,
-- including deletions by ON DELETE CASCADE, which run no application code. The same
-- tables and meanings exist on SQLite (migrations/sqlite/0060); the dashboard's queries,
-- `langcamp stats check` and `langcamp stats rebuild` are shared.
--
-- Concurrency: every change is an upsert (`n = n + delta`) that PostgreSQL applies to the
-- newest committed version of the row under its row lock, so concurrent transactions never
-- lose an update. Transactions that change counted rows meet on the same hot rows (today's
-- row of each series, the row of a level and language) and commit those changes one at a
-- time. A transaction that changes many counted rows (a user's deletion and its cascades)
-- may, rarely, deadlock with another over two rollup rows; PostgreSQL then aborts one, which
-- the service answers with 503 and Retry-After. No global lock: one was tried, and waiting
-- for it while holding row locks (a foreign-key check locks the user) deadlocked ordinary
-- flows such as assigning a material while one of its users was deleted.
-- A transaction that inserts results must not be REPEATABLE READ: its upsert of a rollup
-- row that another transaction changed after its snapshot would fail (40001).

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
);

-- Material assignments per user holding any: a user becomes a holder when their count
-- goes from 0 to 1, and stops being one when it returns to 0 (the row is then removed).
-- A per-row check of "does the user hold another assignment" would not do: an AFTER ROW
-- trigger sees every row of its statement, so a multi-row INSERT would count nobody.
-- (No foreign key: the rows follow the assignments, whose deletion cascades from users.)
CREATE TABLE stats_holdings (
    user_id TEXT NOT NULL PRIMARY KEY,
    n BIGINT NOT NULL
);

-- Placement results by level and target language ('' when the test named none).
CREATE TABLE stats_results (
    level TEXT NOT NULL,
    target_language TEXT NOT NULL,
    submissions BIGINT NOT NULL,
    score_sum BIGINT NOT NULL,
    PRIMARY KEY (level, target_language)
);

-- Rows per UTC day (day = midnight in epoch milliseconds) of each series: users
-- (created_at), results (completed_at), contacts (created_at), assignments (assigned_at).
-- A calendar month is a union of whole days, so a trend point is a sum of about 30 rows.
CREATE TABLE stats_days (
    day BIGINT NOT NULL,
    series TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (day, series)
);

CREATE FUNCTION stats_count(counter TEXT, delta BIGINT) RETURNS void LANGUAGE sql AS $$
    INSERT INTO stats_counts (name, n) VALUES (counter, delta)
    ON CONFLICT (name) DO UPDATE SET n = stats_counts.n + excluded.n
$$;

CREATE FUNCTION stats_day(of_series TEXT, at BIGINT, delta BIGINT) RETURNS void LANGUAGE sql AS $$
    INSERT INTO stats_days (day, series, n) VALUES (at - at % 86400000, of_series, delta)
    ON CONFLICT (day, series) DO UPDATE SET n = stats_days.n + excluded.n
$$;

CREATE FUNCTION stats_result(of_level TEXT, language TEXT, delta BIGINT, score BIGINT) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO stats_results (level, target_language, submissions, score_sum)
    VALUES (of_level, COALESCE(language, ''), delta, score)
    ON CONFLICT (level, target_language) DO UPDATE
    SET submissions = stats_results.submissions + excluded.submissions,
        score_sum = stats_results.score_sum + excluded.score_sum
$$;

-- An UPDATE counts as the removal of the old row and the addition of the new one.

CREATE FUNCTION stats_users() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM stats_count('users.role.' || OLD.role, -1);
        PERFORM stats_count('users.completed', -OLD.is_registration_complete);
        PERFORM stats_day('users', OLD.created_at, -1);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM stats_count('users.role.' || NEW.role, 1);
        PERFORM stats_count('users.completed', NEW.is_registration_complete);
        PERFORM stats_day('users', NEW.created_at, 1);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER stats_users AFTER INSERT OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION stats_users();
CREATE TRIGGER stats_users_update AFTER UPDATE OF role, is_registration_complete, created_at ON users
    FOR EACH ROW
    WHEN (OLD.role <> NEW.role
          OR OLD.is_registration_complete <> NEW.is_registration_complete
          OR OLD.created_at <> NEW.created_at)
    EXECUTE FUNCTION stats_users();

CREATE FUNCTION stats_results() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM stats_result(OLD.level, OLD.target_language, -1, -OLD.total_score);
        PERFORM stats_day('results', OLD.completed_at, -1);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM stats_result(NEW.level, NEW.target_language, 1, NEW.total_score);
        PERFORM stats_day('results', NEW.completed_at, 1);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER stats_results AFTER INSERT OR DELETE ON test_results
    FOR EACH ROW EXECUTE FUNCTION stats_results();
CREATE TRIGGER stats_results_update
    AFTER UPDATE OF level, target_language, total_score, completed_at ON test_results
    FOR EACH ROW
    WHEN (OLD.level <> NEW.level
          OR OLD.target_language IS DISTINCT FROM NEW.target_language
          OR OLD.total_score <> NEW.total_score
          OR OLD.completed_at <> NEW.completed_at)
    EXECUTE FUNCTION stats_results();

CREATE FUNCTION stats_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM stats_count('contacts.status.' || OLD.status, -1);
        PERFORM stats_day('contacts', OLD.created_at, -1);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM stats_count('contacts.status.' || NEW.status, 1);
        PERFORM stats_day('contacts', NEW.created_at, 1);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER stats_contacts AFTER INSERT OR DELETE ON contacts
    FOR EACH ROW EXECUTE FUNCTION stats_contacts();
CREATE TRIGGER stats_contacts_update AFTER UPDATE OF status, created_at ON contacts
    FOR EACH ROW
    WHEN (OLD.status <> NEW.status OR OLD.created_at <> NEW.created_at)
    EXECUTE FUNCTION stats_contacts();

-- A row that changes only its material or date moves no user between holders.
-- (OLD is NULL in an INSERT trigger and NEW in a DELETE trigger.)
CREATE FUNCTION stats_assignments() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    moved boolean := OLD.user_id IS DISTINCT FROM NEW.user_id;
    held bigint;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM stats_count('assignments', -1);
        PERFORM stats_day('assignments', OLD.assigned_at, -1);
        IF moved THEN
            UPDATE stats_holdings SET n = n - 1 WHERE user_id = OLD.user_id RETURNING n INTO held;
            IF held = 0 THEN
                DELETE FROM stats_holdings WHERE user_id = OLD.user_id;
                PERFORM stats_count('assignments.holders', -1);
            END IF;
        END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM stats_count('assignments', 1);
        PERFORM stats_day('assignments', NEW.assigned_at, 1);
        IF moved THEN
            INSERT INTO stats_holdings (user_id, n) VALUES (NEW.user_id, 1)
            ON CONFLICT (user_id) DO UPDATE SET n = stats_holdings.n + 1
            RETURNING n INTO held;
            IF held = 1 THEN
                PERFORM stats_count('assignments.holders', 1);
            END IF;
        END IF;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER stats_assignments AFTER INSERT OR DELETE ON material_assignments
    FOR EACH ROW EXECUTE FUNCTION stats_assignments();
CREATE TRIGGER stats_assignments_update AFTER UPDATE OF material_id, user_id, assigned_at ON material_assignments
    FOR EACH ROW
    WHEN (OLD.material_id <> NEW.material_id
          OR OLD.user_id <> NEW.user_id
          OR OLD.assigned_at <> NEW.assigned_at)
    EXECUTE FUNCTION stats_assignments();

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
