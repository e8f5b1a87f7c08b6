-- The audit trail in the reporting schema (CONTRACT §18 names it among the school's data;
-- it arrived in 0095, beside 0100's views). Native types as in 0100: the time as
-- timestamptz, the changes as jsonb. A user target's label is left as stored (NULL): join
-- reporting.users on target_id for the user's e-mail now. PostgreSQL only; expand-only.
CREATE VIEW reporting.audit_events AS
SELECT id,
       to_timestamp(at / 1000.0) AS at,
       action, actor_type, actor_id, actor_email, actor_role,
       target_type, target_id, target_label,
       CAST(changes AS jsonb) AS changes,
       request_id, client_address
FROM audit_events;
