-- The audit trail (CONTRACT §17, issue 32): one row per staff action, written by the
-- action's own transaction (langcamp-core/src/audit/).
--
-- Append-only: triggers refuse UPDATE, DELETE and TRUNCATE. The one exception is the
-- retention purge: it writes the cut-off into audit_purge inside its transaction, deletes
-- only rows older than that, and removes the row again before it commits, so no other
-- transaction ever sees a permit. User targets are kept by id (target_label stays NULL):
-- their label is read at query time, so erasing a user needs no change to the trail.
-- Expand-only.
CREATE TABLE audit_events (
    id TEXT NOT NULL PRIMARY KEY,
    at BIGINT NOT NULL,
    action TEXT NOT NULL,
    actor_type TEXT NOT NULL CHECK (actor_type IN ('user', 'operator')),
    actor_id TEXT,
    actor_email TEXT NOT NULL,
    actor_role TEXT,
    target_type TEXT NOT NULL,
    target_id TEXT,
    target_label TEXT,
    changes TEXT,
    request_id TEXT,
    client_address TEXT
);

CREATE INDEX audit_events_at_idx ON audit_events (at, id);
CREATE INDEX audit_events_actor_at_idx ON audit_events (actor_id, at);
CREATE INDEX audit_events_target_at_idx ON audit_events (target_type, target_id, at);
CREATE INDEX audit_events_action_at_idx ON audit_events (action, at);

CREATE TABLE audit_purge (
    before BIGINT NOT NULL
);

CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND EXISTS (SELECT 1 FROM audit_purge WHERE OLD.at < audit_purge.before) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit entries are append-only';
END
$$;

CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();

CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();
