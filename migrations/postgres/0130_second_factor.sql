-- A second factor (CONTRACT §20, issue #41) and passkeys (§21, issue #42). Expand only.

-- The assurance of a sign-in: 1 after the e-mail code alone, 2 after a second factor or a
-- passkey; factor_at is its latest second-factor check (epoch ms), factor_failures the
-- wrong codes it has sent (five end it). A refresh keeps all three.
ALTER TABLE sessions ADD COLUMN aal BIGINT NOT NULL DEFAULT 1 CHECK (aal IN (1, 2));
ALTER TABLE sessions ADD COLUMN factor_at BIGINT;
ALTER TABLE sessions ADD COLUMN factor_failures BIGINT NOT NULL DEFAULT 0 CHECK (factor_failures >= 0);

-- A user's factors. A `totp` factor is pending until its first code confirms it
-- (confirmed_at NULL); its secret is sealed with a key derived from the server secret
-- (AEAD), never stored readable, and last_step is the time step of the last code it
-- accepted (a code works once). A `passkey` is confirmed when registered; credential_id
-- is its WebAuthn credential id (hex), passkey what the relying-party library
-- stores of it (public key, sign counter), as JSON.
CREATE TABLE user_factors (
    id TEXT NOT NULL PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('totp', 'passkey')),
    name TEXT NOT NULL,
    totp_secret BYTEA,
    totp_last_step BIGINT,
    credential_id TEXT,
    passkey TEXT,
    created_at BIGINT NOT NULL,
    confirmed_at BIGINT,
    last_used_at BIGINT,
    CHECK ((kind = 'totp') = (totp_secret IS NOT NULL)),
    CHECK ((kind = 'passkey') = (credential_id IS NOT NULL AND passkey IS NOT NULL))
);
CREATE INDEX user_factors_user_id_idx ON user_factors (user_id);
-- At most one `totp` factor per user, pending or confirmed.
CREATE UNIQUE INDEX user_factors_one_totp_idx ON user_factors (user_id) WHERE kind = 'totp';
CREATE UNIQUE INDEX user_factors_credential_id_idx ON user_factors (credential_id);

-- Recovery codes, stored as keyed hashes; a used one keeps its row (used_at) until new
-- codes replace them all.
CREATE TABLE recovery_codes (
    id TEXT NOT NULL PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    used_at BIGINT
);
CREATE INDEX recovery_codes_user_id_idx ON recovery_codes (user_id);

-- A passkey ceremony under way: the relying-party library's state for its answer, kept
-- in the database so any instance finishes what another began. Single use (deleted when
-- answered) and short-lived (expires_at). user_id names whose passkey is registered or
-- checked; NULL for a sign-in with a discoverable credential.
CREATE TABLE passkey_challenges (
    id TEXT NOT NULL PRIMARY KEY,
    purpose TEXT NOT NULL CHECK (purpose IN ('register', 'sign_in', 'second_factor')),
    user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
    state TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX passkey_challenges_expires_at_idx ON passkey_challenges (expires_at);

-- The security notice mail (`security_notice`) joins the outbox's kinds.
ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check;
ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check
    CHECK (kind IN ('otp', 'contact_reply', 'material_assignment', 'security_notice'));
