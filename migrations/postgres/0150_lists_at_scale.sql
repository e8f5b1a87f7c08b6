-- Every admin list answers from an index, with its exact total from a count kept by
-- triggers or from an index (issue #54). Expand only: new counts, tables and indexes.
--
-- On a big school this migration builds indexes and fills counts over every user, result,
-- contact and audit entry: minutes at millions of rows, with writes to those tables held
-- meanwhile (docs/OPERATIONS.md, "Migration notes", 0150: how to build the indexes
-- beforehand, concurrently, under the same names).

-- Substring search of the users' and the contact requests' lists (`q`) through trigram
-- indexes. pg_trgm is a trusted extension: the database's owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The searched text of a row, lower case, its fields apart (chr(1) is in no searched
-- text, so a fragment never matches across two fields). The lists' queries use these
-- very expressions.
CREATE INDEX IF NOT EXISTS users_search_idx ON users
    USING gin ((lower(email) || chr(1) || lower(COALESCE(name, ''))) gin_trgm_ops);
CREATE INDEX IF NOT EXISTS contacts_search_idx ON contacts
    USING gin ((lower(first_name) || chr(1) || lower(last_name) || chr(1) || lower(email)) gin_trgm_ops);

-- The trail of one actor by e-mail (`langcamp audit list --actor`, which also names the
-- operator), newest first.
CREATE INDEX IF NOT EXISTS audit_events_actor_email_at_idx ON audit_events (actor_email, at);

-- The results of one level and one language, newest first, the key included so that a
-- deep page is found in the index alone.
CREATE INDEX IF NOT EXISTS test_results_level_language_completed_at_idx
    ON test_results (level, target_language, completed_at, id);

-- Completed users per role (`users.role.<role>.completed` in stats_counts): the users
-- list's total for a role and a registration state together. Counted only for completed
-- users, so a new user's sign-in (incomplete) touches no row of it.
CREATE FUNCTION stats_users_completed_role() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.is_registration_complete = 1 THEN
        PERFORM stats_count('users.role.' || OLD.role || '.completed', -1, stats_shard(OLD.id));
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.is_registration_complete = 1 THEN
        PERFORM stats_count('users.role.' || NEW.role || '.completed', 1, stats_shard(NEW.id));
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER stats_users_completed_role AFTER INSERT OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION stats_users_completed_role();
CREATE TRIGGER stats_users_completed_role_update AFTER UPDATE OF role, is_registration_complete ON users
    FOR EACH ROW
    WHEN (OLD.role <> NEW.role OR OLD.is_registration_complete <> NEW.is_registration_complete)
    EXECUTE FUNCTION stats_users_completed_role();

INSERT INTO stats_counts (name, n) SELECT 'users.role.' || role || '.completed' AS name, COUNT(*) AS n FROM users
             WHERE is_registration_complete = 1 GROUP BY role;

-- Results by test, level and target language ('' when none): the results list's total
-- for any of its filters but the user (a user's results are counted in their index).
CREATE TABLE stats_result_tests (
    test_id TEXT NOT NULL,
    level TEXT NOT NULL,
    target_language TEXT NOT NULL,
    shard SMALLINT NOT NULL DEFAULT 0,
    n BIGINT NOT NULL,
    PRIMARY KEY (test_id, level, target_language, shard)
);

CREATE FUNCTION stats_result_test(test TEXT, of_level TEXT, language TEXT, delta BIGINT, in_shard SMALLINT)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO stats_result_tests (test_id, level, target_language, shard, n)
    VALUES (COALESCE(test, ''), of_level, COALESCE(language, ''), in_shard, delta)
    ON CONFLICT (test_id, level, target_language, shard) DO UPDATE
    SET n = stats_result_tests.n + excluded.n
$$;

CREATE FUNCTION stats_result_tests() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM stats_result_test(OLD.test_id, OLD.level, OLD.target_language, -1, stats_shard(OLD.id));
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM stats_result_test(NEW.test_id, NEW.level, NEW.target_language, 1, stats_shard(NEW.id));
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER stats_result_tests AFTER INSERT OR DELETE ON test_results
    FOR EACH ROW EXECUTE FUNCTION stats_result_tests();
-- A deleted test sets its results' test_id to NULL (ON DELETE SET NULL): they move to ''.
CREATE TRIGGER stats_result_tests_update AFTER UPDATE OF test_id, level, target_language ON test_results
    FOR EACH ROW
    WHEN (OLD.test_id IS DISTINCT FROM NEW.test_id
          OR OLD.level <> NEW.level
          OR OLD.target_language IS DISTINCT FROM NEW.target_language)
    EXECUTE FUNCTION stats_result_tests();

INSERT INTO stats_result_tests (level, test_id, target_language, n) SELECT level, COALESCE(test_id, '') AS test_id,
                    COALESCE(target_language, '') AS target_language, COUNT(*) AS n
             FROM test_results
             GROUP BY level, COALESCE(test_id, ''), COALESCE(target_language, '');

-- Audit entries per UTC day and action: the trail's total for a time range (whole days
-- from here, the two partial days from the (at, id) index) and for an action. Written
-- with each entry, by staff writes only, so one row per day and action is enough (no
-- shards); the retention purge removes entries and counts them out.
CREATE TABLE stats_audit_days (
    day BIGINT NOT NULL,
    action TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (day, action)
);

CREATE FUNCTION stats_audit_days() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO stats_audit_days (day, action, n) VALUES (NEW.at - NEW.at % 86400000, NEW.action, 1)
        ON CONFLICT (day, action) DO UPDATE SET n = stats_audit_days.n + 1;
    ELSE
        UPDATE stats_audit_days SET n = n - 1
        WHERE day = OLD.at - OLD.at % 86400000 AND action = OLD.action;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER stats_audit_days AFTER INSERT OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION stats_audit_days();

INSERT INTO stats_audit_days (action, day, n) SELECT action, at - at % 86400000 AS day, COUNT(*) AS n
             FROM audit_events GROUP BY action, at - at % 86400000;
