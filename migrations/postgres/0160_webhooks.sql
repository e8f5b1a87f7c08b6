-- Webhooks (CONTRACT §24): the school's endpoints and the deliveries queued for them.
-- Expand only.

-- An endpoint. `events` is the set of event names it hears, each between commas
-- (",contact.created,result.created,"), so a subscription is one LIKE. `secret` is its
-- signing secret sealed under the server's keyring (purpose webhook-secret, bound to the
-- id); `previous_secret` the one before a change, still signed with until
-- `previous_until`. After failed attempts the endpoint rests (`failures` in a row, no
-- attempt before `resting_until`), so a dead one holds no worker from the others.
CREATE TABLE webhook_endpoints (
    id TEXT NOT NULL PRIMARY KEY,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    description TEXT,
    enabled BIGINT NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    secret BYTEA NOT NULL,
    previous_secret BYTEA,
    previous_until BIGINT,
    failures BIGINT NOT NULL DEFAULT 0 CHECK (failures >= 0),
    resting_until BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- A delivery: one event for one endpoint, a row of the durable queue
-- (langcamp-core/src/platform/queue.rs). `id` is its `webhook-id`, the same on every
-- retry; `body` the JSON sent (NULL once it ended: the log keeps what happened, not
-- the data).
CREATE TABLE webhook_deliveries (
    id TEXT NOT NULL PRIMARY KEY,
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    body TEXT,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    lease_owner TEXT,
    lease_until BIGINT,
    last_status_code BIGINT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    delivered_at BIGINT
);

CREATE INDEX webhook_deliveries_status_next_attempt_at_idx ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, status, next_attempt_at);
CREATE INDEX webhook_deliveries_endpoint_created_at_idx ON webhook_deliveries (endpoint_id, created_at, id);
CREATE INDEX webhook_deliveries_created_at_idx ON webhook_deliveries (created_at);
