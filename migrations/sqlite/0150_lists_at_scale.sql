-- Every admin list answers from an index, with its exact total from a count kept by
-- triggers or from an index (issue #54). Expand only: new counts, tables and indexes.

-- Substring search of the users' and the contact requests' lists (`q`): FTS5 tables with
-- the trigram tokenizer, which answer `LIKE '%fragment%'` from their index. Each holds
-- the searched text of a row, lower case, its fields apart (char(1) is in no searched
-- text, so a fragment never matches across two fields). An FTS row is keyed by an integer;
-- the *_search_keys tables give each user and contact one that stays (a table's own rowid
-- may change in a VACUUM, and `langcamp backup` is one).
CREATE TABLE user_search_keys (
    key INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL UNIQUE
);
CREATE VIRTUAL TABLE user_search USING fts5(search, tokenize = 'trigram');

INSERT INTO user_search_keys (user_id) SELECT id FROM users ORDER BY created_at, id;
INSERT INTO user_search (rowid, search)
    SELECT k.key, lower(u.email) || char(1) || lower(COALESCE(u.name, ''))
    FROM users u JOIN user_search_keys k ON k.user_id = u.id;

CREATE TRIGGER user_search_insert AFTER INSERT ON users BEGIN
    INSERT INTO user_search_keys (user_id) VALUES (NEW.id);
    INSERT INTO user_search (rowid, search)
        SELECT key, lower(NEW.email) || char(1) || lower(COALESCE(NEW.name, ''))
        FROM user_search_keys WHERE user_id = NEW.id;
END;

CREATE TRIGGER user_search_update AFTER UPDATE OF email, name ON users BEGIN
    UPDATE user_search SET search = lower(NEW.email) || char(1) || lower(COALESCE(NEW.name, ''))
        WHERE rowid = (SELECT key FROM user_search_keys WHERE user_id = NEW.id);
END;

CREATE TRIGGER user_search_delete AFTER DELETE ON users BEGIN
    DELETE FROM user_search WHERE rowid = (SELECT key FROM user_search_keys WHERE user_id = OLD.id);
    DELETE FROM user_search_keys WHERE user_id = OLD.id;
END;

CREATE TABLE contact_search_keys (
    key INTEGER PRIMARY KEY,
    contact_id TEXT NOT NULL UNIQUE
);
CREATE VIRTUAL TABLE contact_search USING fts5(search, tokenize = 'trigram');

INSERT INTO contact_search_keys (contact_id) SELECT id FROM contacts ORDER BY created_at, id;
INSERT INTO contact_search (rowid, search)
    SELECT k.key, lower(c.first_name) || char(1) || lower(c.last_name) || char(1) || lower(c.email)
    FROM contacts c JOIN contact_search_keys k ON k.contact_id = c.id;

CREATE TRIGGER contact_search_insert AFTER INSERT ON contacts BEGIN
    INSERT INTO contact_search_keys (contact_id) VALUES (NEW.id);
    INSERT INTO contact_search (rowid, search)
        SELECT key, lower(NEW.first_name) || char(1) || lower(NEW.last_name) || char(1) || lower(NEW.email)
        FROM contact_search_keys WHERE contact_id = NEW.id;
END;

CREATE TRIGGER contact_search_update AFTER UPDATE OF first_name, last_name, email ON contacts BEGIN
    UPDATE contact_search
        SET search = lower(NEW.first_name) || char(1) || lower(NEW.last_name) || char(1) || lower(NEW.email)
        WHERE rowid = (SELECT key FROM contact_search_keys WHERE contact_id = NEW.id);
END;

CREATE TRIGGER contact_search_delete AFTER DELETE ON contacts BEGIN
    DELETE FROM contact_search WHERE rowid = (SELECT key FROM contact_search_keys WHERE contact_id = OLD.id);
    DELETE FROM contact_search_keys WHERE contact_id = OLD.id;
END;

-- The trail of one actor by e-mail (`langcamp audit list --actor`, which also names the
-- operator), newest first.
CREATE INDEX audit_events_actor_email_at_idx ON audit_events (actor_email, at);

-- The results of one level and one language, newest first, the key included so that a
-- deep page is found in the index alone.
CREATE INDEX test_results_level_language_completed_at_idx
    ON test_results (level, target_language, completed_at, id);

-- Completed users per role (`users.role.<role>.completed` in stats_counts): the users
-- list's total for a role and a registration state together. Counted only for completed
-- users, so a new user's sign-in (incomplete) touches no row of it.
INSERT INTO stats_counts (name, n) SELECT 'users.role.' || role || '.completed' AS name, COUNT(*) AS n FROM users
             WHERE is_registration_complete = 1 GROUP BY role;

CREATE TRIGGER stats_users_completed_role_insert AFTER INSERT ON users
WHEN NEW.is_registration_complete = 1 BEGIN
    INSERT INTO stats_counts (name, n) VALUES ('users.role.' || NEW.role || '.completed', 1)
        ON CONFLICT (name) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER stats_users_completed_role_delete AFTER DELETE ON users
WHEN OLD.is_registration_complete = 1 BEGIN
    UPDATE stats_counts SET n = n - 1 WHERE name = 'users.role.' || OLD.role || '.completed';
END;

CREATE TRIGGER stats_users_completed_role_update AFTER UPDATE OF role, is_registration_complete ON users
WHEN OLD.role <> NEW.role OR OLD.is_registration_complete <> NEW.is_registration_complete BEGIN
    UPDATE stats_counts SET n = n - 1
        WHERE name = 'users.role.' || OLD.role || '.completed' AND OLD.is_registration_complete = 1;
    INSERT INTO stats_counts (name, n)
        SELECT 'users.role.' || NEW.role || '.completed', 1 WHERE NEW.is_registration_complete = 1
        ON CONFLICT (name) DO UPDATE SET n = n + excluded.n;
END;

-- Results by test, level and target language ('' when none): the results list's total
-- for any of its filters but the user (a user's results are counted in their index).
CREATE TABLE stats_result_tests (
    test_id TEXT NOT NULL,
    level TEXT NOT NULL,
    target_language TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (test_id, level, target_language)
) WITHOUT ROWID;

INSERT INTO stats_result_tests (level, test_id, target_language, n) SELECT level, COALESCE(test_id, '') AS test_id,
                    COALESCE(target_language, '') AS target_language, COUNT(*) AS n
             FROM test_results
             GROUP BY level, COALESCE(test_id, ''), COALESCE(target_language, '');

CREATE TRIGGER stats_result_tests_insert AFTER INSERT ON test_results BEGIN
    INSERT INTO stats_result_tests (test_id, level, target_language, n)
        VALUES (COALESCE(NEW.test_id, ''), NEW.level, COALESCE(NEW.target_language, ''), 1)
        ON CONFLICT (test_id, level, target_language) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER stats_result_tests_delete AFTER DELETE ON test_results BEGIN
    UPDATE stats_result_tests SET n = n - 1
        WHERE test_id = COALESCE(OLD.test_id, '') AND level = OLD.level
          AND target_language = COALESCE(OLD.target_language, '');
END;

-- A deleted test sets its results' test_id to NULL (ON DELETE SET NULL): they move to ''.
CREATE TRIGGER stats_result_tests_update AFTER UPDATE OF test_id, level, target_language ON test_results
WHEN OLD.test_id IS NOT NEW.test_id OR OLD.level <> NEW.level
     OR OLD.target_language IS NOT NEW.target_language BEGIN
    UPDATE stats_result_tests SET n = n - 1
        WHERE test_id = COALESCE(OLD.test_id, '') AND level = OLD.level
          AND target_language = COALESCE(OLD.target_language, '');
    INSERT INTO stats_result_tests (test_id, level, target_language, n)
        VALUES (COALESCE(NEW.test_id, ''), NEW.level, COALESCE(NEW.target_language, ''), 1)
        ON CONFLICT (test_id, level, target_language) DO UPDATE SET n = n + excluded.n;
END;

-- Audit entries per UTC day and action: the trail's total for a time range (whole days
-- from here, the two partial days from the (at, id) index) and for an action; the
-- retention purge removes entries and counts them out.
CREATE TABLE stats_audit_days (
    day BIGINT NOT NULL,
    action TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (day, action)
) WITHOUT ROWID;

INSERT INTO stats_audit_days (action, day, n) SELECT action, at - at % 86400000 AS day, COUNT(*) AS n
             FROM audit_events GROUP BY action, at - at % 86400000;

CREATE TRIGGER stats_audit_days_insert AFTER INSERT ON audit_events BEGIN
    INSERT INTO stats_audit_days (day, action, n) VALUES (NEW.at - NEW.at % 86400000, NEW.action, 1)
        ON CONFLICT (day, action) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER stats_audit_days_delete AFTER DELETE ON audit_events BEGIN
    UPDATE stats_audit_days SET n = n - 1
        WHERE day = OLD.at - OLD.at % 86400000 AND action = OLD.action;
END;
