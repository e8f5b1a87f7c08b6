-- Traces (CONTRACT §23): the `traceparent` of the request that queued a mail, so the mail
-- worker's trace of its delivery links back to it. NULL while tracing is off, and for mail
-- queued by a release before this one. Expand only.
ALTER TABLE mail_outbox ADD COLUMN trace_parent TEXT;
