-- Rollup rows in shards, so concurrent writers stop queueing on them (issue 18).
--
-- Measured before (docs/BENCHMARKS.md, "What bounds each target"): sign-ins of new users ran
-- one at a time on PostgreSQL. Every new user's trigger upserts the same rows (today's row
-- of the users series, the count of the role), and a row updated by an open transaction
-- makes every other writer of that row wait for its commit, so each sign-in held the rows
-- for the rest of its transaction. Now each counted row adds to one of 8 rows of its count,
-- picked by a hash of its id (`stats_shard`): transactions counting different rows rarely
-- meet, and a row's later changes (an update, its deletion) land in the same shard as its
-- insert. Readers sum the shards (`langcamp-core/src/dashboard/rollups.rs`); `langcamp stats
-- rebuild` writes whole counts into shard 0.
--
-- SQLite has one writer and needs no shards: its tables keep one row per count, which the
-- same summing reads give back unchanged.

CREATE FUNCTION stats_shard(id TEXT) RETURNS smallint LANGUAGE sql IMMUTABLE AS $$
    SELECT (hashtext(id) & 7)::smallint
$$;

ALTER TABLE stats_counts ADD COLUMN shard SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE stats_counts DROP CONSTRAINT stats_counts_pkey;
ALTER TABLE stats_counts ADD PRIMARY KEY (name, shard);

ALTER TABLE stats_results ADD COLUMN shard SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE stats_results DROP CONSTRAINT stats_results_pkey;
ALTER TABLE stats_results ADD PRIMARY KEY (level, target_language, shard);

ALTER TABLE stats_days ADD COLUMN shard SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE stats_days DROP CONSTRAINT stats_days_pkey;
ALTER TABLE stats_days ADD PRIMARY KEY (day, series, shard);

-- The upserts, now into a shard (their conflict targets are the new keys, so the old
-- forms cannot run any more and are dropped after the triggers stop calling them).
CREATE FUNCTION stats_count(counter TEXT, delta BIGINT, in_shard SMALLINT) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO stats_counts (name, shard, n) VALUES (counter, in_shard, delta)
    ON CONFLICT (name, shard) DO UPDATE SET n = stats_counts.n + excluded.n
$$;

CREATE FUNCTION stats_day(of_series TEXT, at BIGINT, delta BIGINT, in_shard SMALLINT) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO stats_days (day, series, shard, n) VALUES (at - at % 86400000, of_series, in_shard, delta)
    ON CONFLICT (day, series, shard) DO UPDATE SET n = stats_days.n + excluded.n
$$;

CREATE FUNCTION stats_result(of_level TEXT, language TEXT, delta BIGINT, score BIGINT, in_shard SMALLINT)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO stats_results (level, target_language, shard, submissions, score_sum)
    VALUES (of_level, COALESCE(language, ''), in_shard, delta, score)
    ON CONFLICT (level, target_language, shard) DO UPDATE
    SET submissions = stats_results.submissions + excluded.submissions,
        score_sum = stats_results.score_sum + excluded.score_sum
$$;

CREATE OR REPLACE FUNCTION stats_users() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM stats_count('users.role.' || OLD.role, -1, stats_shard(OLD.id));
        PERFORM stats_count('users.completed', -OLD.is_registration_complete, stats_shard(OLD.id));
        PERFORM stats_day('users', OLD.created_at, -1, stats_shard(OLD.id));
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM stats_count('users.role.' || NEW.role, 1, stats_shard(NEW.id));
        PERFORM stats_count('users.completed', NEW.is_registration_complete, stats_shard(NEW.id));
        PERFORM stats_day('users', NEW.created_at, 1, stats_shard(NEW.id));
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION stats_results() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM stats_result(OLD.level, OLD.target_language, -1, -OLD.total_score, stats_shard(OLD.id));
        PERFORM stats_day('results', OLD.completed_at, -1, stats_shard(OLD.id));
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM stats_result(NEW.level, NEW.target_language, 1, NEW.total_score, stats_shard(NEW.id));
        PERFORM stats_day('results', NEW.completed_at, 1, stats_shard(NEW.id));
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION stats_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM stats_count('contacts.status.' || OLD.status, -1, stats_shard(OLD.id));
        PERFORM stats_day('contacts', OLD.created_at, -1, stats_shard(OLD.id));
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM stats_count('contacts.status.' || NEW.status, 1, stats_shard(NEW.id));
        PERFORM stats_day('contacts', NEW.created_at, 1, stats_shard(NEW.id));
    END IF;
    RETURN NULL;
END
$$;

-- Assignments have no id of their own: the user's picks the shard.
CREATE OR REPLACE FUNCTION stats_assignments() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    moved boolean := OLD.user_id IS DISTINCT FROM NEW.user_id;
    held bigint;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM stats_count('assignments', -1, stats_shard(OLD.user_id));
        PERFORM stats_day('assignments', OLD.assigned_at, -1, stats_shard(OLD.user_id));
        IF moved THEN
            UPDATE stats_holdings SET n = n - 1 WHERE user_id = OLD.user_id RETURNING n INTO held;
            IF held = 0 THEN
                DELETE FROM stats_holdings WHERE user_id = OLD.user_id;
                PERFORM stats_count('assignments.holders', -1, stats_shard(OLD.user_id));
            END IF;
        END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM stats_count('assignments', 1, stats_shard(NEW.user_id));
        PERFORM stats_day('assignments', NEW.assigned_at, 1, stats_shard(NEW.user_id));
        IF moved THEN
            INSERT INTO stats_holdings (user_id, n) VALUES (NEW.user_id, 1)
            ON CONFLICT (user_id) DO UPDATE SET n = stats_holdings.n + 1
            RETURNING n INTO held;
            IF held = 1 THEN
                PERFORM stats_count('assignments.holders', 1, stats_shard(NEW.user_id));
            END IF;
        END IF;
    END IF;
    RETURN NULL;
END
$$;

DROP FUNCTION stats_count(TEXT, BIGINT);
DROP FUNCTION stats_day(TEXT, BIGINT, BIGINT);
DROP FUNCTION stats_result(TEXT, TEXT, BIGINT, BIGINT);
