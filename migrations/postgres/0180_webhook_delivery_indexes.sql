-- Queuing a webhook delivery writes fewer indexes (issue #55: a submission with an endpoint
-- cost 20-30 % more than without). One partial index of the pending rows serves the worker
-- (the due endpoints, a claim), giving up on stale rows and the backlog metric; the
-- delivery log and the retention purge (per endpoint) keep (endpoint_id, created_at, id).
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (endpoint_id, next_attempt_at, created_at)
    WHERE status = 'pending';
DROP INDEX webhook_deliveries_status_next_attempt_at_idx;
DROP INDEX webhook_deliveries_endpoint_due_idx;
DROP INDEX webhook_deliveries_created_at_idx;

-- The foreign key to the endpoint share-locked the endpoint's row in every transaction that
-- queued a delivery; concurrent submissions all locking one row made a multixact each.
-- What it guarded is kept otherwise: a delivery is queued only for an endpoint that exists
-- (INSERT ... SELECT from webhook_endpoints), deleting an endpoint deletes its deliveries,
-- and the worker's housekeeping deletes a delivery whose endpoint went in the same instant.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey;
