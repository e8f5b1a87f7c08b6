-- Queuing a webhook delivery writes fewer indexes (issue #55: a submission with an endpoint
-- cost 20-30 % more than without). One partial index of the pending rows serves the worker
-- (the due endpoints, a claim), giving up on stale rows and the backlog metric; the
-- delivery log and the retention purge (per endpoint) keep (endpoint_id, created_at, id).
-- (The foreign key stays: SQLite checks it without a lock, and dropping it would rebuild
-- the table.)
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (endpoint_id, next_attempt_at, created_at)
    WHERE status = 'pending';
DROP INDEX webhook_deliveries_status_next_attempt_at_idx;
DROP INDEX webhook_deliveries_endpoint_due_idx;
DROP INDEX webhook_deliveries_created_at_idx;
