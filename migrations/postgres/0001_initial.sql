-- Langcamp initial schema (PostgreSQL 15).
--
-- migrations/sqlite/0001_initial.sql defines the same tables, columns (same order),
-- constraints and indexes, only type spellings differ (BYTEA here, BLOB there).
-- Portable conventions, because one query layer serves both backends through sqlx Any:
--   ids are TEXT (UUID v7 strings made in Rust), declared NOT NULL because SQLite
--   otherwise accepts NULL in a non-INTEGER PRIMARY KEY.
--   Times are BIGINT epoch milliseconds UTC named *_at.
--   Booleans are BIGINT 0/1 with a CHECK. JSON and calendar dates ('YYYY-MM-DD') are TEXT.
--   Money and other non-integers are DOUBLE PRECISION.
-- Index names: <table>_<columns>_idx, unique ones <table>_<columns>_key (the name that
-- PostgreSQL reports for a unique violation).

-- Accounts. email is unique and stored trimmed and lower-cased by the app.
-- role is checked against the database on every request, so a change applies at once.
-- Profile fields stay NULL until registration is completed.
CREATE TABLE users (
    id TEXT NOT NULL PRIMARY KEY,
    email TEXT NOT NULL,
    name TEXT,
    role TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin', 'superadmin')),
    is_registration_complete BIGINT NOT NULL DEFAULT 0 CHECK (is_registration_complete IN (0, 1)),
    age BIGINT,
    gender TEXT CHECK (gender IS NULL OR gender IN ('male', 'female', 'other', 'prefer_not_to_say')),
    city TEXT,
    country TEXT,
    country_code TEXT,
    phone_number TEXT,
    locale TEXT NOT NULL DEFAULT 'en',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX users_email_key ON users (email);
CREATE INDEX users_created_at_idx ON users (created_at);
CREATE INDEX users_role_created_at_idx ON users (role, created_at);
CREATE INDEX users_is_registration_complete_created_at_idx ON users (is_registration_complete, created_at);

-- The one live one-time sign-in code per e-mail address (a new request replaces it).
-- code_hash is an HMAC (hex) of the code, never the code itself. attempts counts wrong
-- tries (the code is dead after 5). The row is deleted when the code verifies.
CREATE TABLE otp_codes (
    email TEXT NOT NULL PRIMARY KEY,
    code_hash TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX otp_codes_expires_at_idx ON otp_codes (expires_at);

-- Log of codes issued, one row per code, to enforce the cap of 5 codes per address per
-- hour (count rows for the e-mail since now - 1h). Rows older than an hour are purged.
CREATE TABLE otp_issues (
    id TEXT NOT NULL PRIMARY KEY,
    email TEXT NOT NULL,
    issued_at BIGINT NOT NULL
);

CREATE INDEX otp_issues_email_issued_at_idx ON otp_issues (email, issued_at);
CREATE INDEX otp_issues_issued_at_idx ON otp_issues (issued_at);

-- A sign-in (the `sid` claim of access tokens). Every authenticated request checks that
-- it is live: revoked_at IS NULL and expires_at (end of the refresh lifetime) not passed.
-- last_used_at is set at creation and moved on each refresh.
CREATE TABLE sessions (
    id TEXT NOT NULL PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT,
    last_used_at BIGINT NOT NULL
);

CREATE INDEX sessions_user_id_idx ON sessions (user_id);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

-- Refresh tokens, stored only as SHA-256 hex of the token. rotated_at is set when the
-- token was exchanged for a new one: presented again within 10 s of rotated_at it gets
-- a fresh pair for the same session, later it revokes the session.
CREATE TABLE refresh_tokens (
    token_hash TEXT NOT NULL PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    rotated_at BIGINT
);

CREATE INDEX refresh_tokens_session_id_idx ON refresh_tokens (session_id);
CREATE INDEX refresh_tokens_expires_at_idx ON refresh_tokens (expires_at);

-- Blacklist of access-token ids (jti) revoked by logout, kept until the token would
-- have expired anyway, then purged.
CREATE TABLE revoked_tokens (
    jti TEXT NOT NULL PRIMARY KEY,
    expires_at BIGINT NOT NULL
);

CREATE INDEX revoked_tokens_expires_at_idx ON revoked_tokens (expires_at);

-- Courses offered by the school. level is a CEFR label or NULL. start_date and end_date
-- are calendar dates 'YYYY-MM-DD'. price is in currency (ISO 4217). Public lists show
-- only published courses, ordered by sort_order then created_at.
CREATE TABLE courses (
    id TEXT NOT NULL PRIMARY KEY,
    title TEXT NOT NULL,
    summary TEXT,
    description TEXT,
    target_language TEXT,
    level TEXT CHECK (level IS NULL OR level IN ('A1', 'A2', 'B1', 'B2', 'C1', 'C2')),
    locale TEXT,
    image_url TEXT,
    location TEXT,
    start_date TEXT,
    end_date TEXT,
    price DOUBLE PRECISION CHECK (price IS NULL OR price >= 0),
    currency TEXT,
    capacity BIGINT CHECK (capacity IS NULL OR capacity >= 0),
    is_published BIGINT NOT NULL DEFAULT 0 CHECK (is_published IN (0, 1)),
    sort_order BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX courses_is_published_sort_order_created_at_idx ON courses (is_published, sort_order, created_at);
CREATE INDEX courses_sort_order_created_at_idx ON courses (sort_order, created_at);
CREATE INDEX courses_locale_idx ON courses (locale);
CREATE INDEX courses_target_language_idx ON courses (target_language);

-- Placement tests. question_count and max_score (sum of question points) are kept in
-- step with test_questions by the app, so lists need not join or aggregate.
CREATE TABLE proficiency_tests (
    id TEXT NOT NULL PRIMARY KEY,
    title TEXT NOT NULL,
    description TEXT,
    locale TEXT,
    target_language TEXT,
    time_limit_minutes BIGINT,
    is_active BIGINT NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    question_count BIGINT NOT NULL DEFAULT 0 CHECK (question_count >= 0),
    max_score BIGINT NOT NULL DEFAULT 0 CHECK (max_score >= 0),
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX proficiency_tests_is_active_created_at_idx ON proficiency_tests (is_active, created_at);
CREATE INDEX proficiency_tests_locale_created_at_idx ON proficiency_tests (locale, created_at);
CREATE INDEX proficiency_tests_target_language_created_at_idx ON proficiency_tests (target_language, created_at);
-- Added: serves GET /proficiency-tests/languages (distinct languages of active tests).
CREATE INDEX proficiency_tests_is_active_target_language_idx ON proficiency_tests (is_active, target_language);

-- Questions of a test, ordered by position (0-based in the app). correct_option_id names
-- a row of test_options of this question. It has no foreign key because options are
-- inserted after their question and a circular key cannot be written portably, so the
-- app sets and checks it in the same transaction.
CREATE TABLE test_questions (
    id TEXT NOT NULL PRIMARY KEY,
    test_id TEXT NOT NULL REFERENCES proficiency_tests (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    text TEXT NOT NULL,
    points BIGINT NOT NULL DEFAULT 1 CHECK (points > 0),
    correct_option_id TEXT NOT NULL
);

CREATE UNIQUE INDEX test_questions_test_id_position_key ON test_questions (test_id, position);

-- Answer options of a question, ordered by position.
CREATE TABLE test_options (
    id TEXT NOT NULL PRIMARY KEY,
    question_id TEXT NOT NULL REFERENCES test_questions (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    text TEXT NOT NULL
);

CREATE UNIQUE INDEX test_options_question_id_position_key ON test_options (question_id, position);

-- Score bands of a test: a total score in [min_score, max_score] (inclusive) gets level
-- and message. The app checks that bands do not overlap and cover 0..max score.
CREATE TABLE test_level_ranges (
    id TEXT NOT NULL PRIMARY KEY,
    test_id TEXT NOT NULL REFERENCES proficiency_tests (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    level TEXT NOT NULL,
    min_score BIGINT NOT NULL,
    max_score BIGINT NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    CHECK (min_score <= max_score)
);

CREATE UNIQUE INDEX test_level_ranges_test_id_position_key ON test_level_ranges (test_id, position);

-- One row per test submission (retakes are separate rows). Results survive deletion of
-- the test (test_id becomes NULL), so test_title and target_language are snapshots taken
-- at submission, and answers is a JSON snapshot of the per-question detail (question and
-- option ids and texts, points, correctness, the correct option).
CREATE TABLE test_results (
    id TEXT NOT NULL PRIMARY KEY,
    test_id TEXT REFERENCES proficiency_tests (id) ON DELETE SET NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    test_title TEXT NOT NULL,
    target_language TEXT,
    total_score BIGINT NOT NULL CHECK (total_score >= 0),
    max_score BIGINT NOT NULL CHECK (max_score >= 0),
    level TEXT NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    answers TEXT NOT NULL,
    completed_at BIGINT NOT NULL
);

CREATE INDEX test_results_user_id_completed_at_idx ON test_results (user_id, completed_at);
CREATE INDEX test_results_test_id_completed_at_idx ON test_results (test_id, completed_at);
CREATE INDEX test_results_level_completed_at_idx ON test_results (level, completed_at);
CREATE INDEX test_results_target_language_completed_at_idx ON test_results (target_language, completed_at);
CREATE INDEX test_results_completed_at_idx ON test_results (completed_at);

-- Uploaded files. The bytes live in the file store under storage_key, a path generated
-- by the server (a client-supplied name never becomes a path). mime_type is decided from
-- the content. sha256 (hex) is served as the ETag.
CREATE TABLE stored_files (
    id TEXT NOT NULL PRIMARY KEY,
    original_name TEXT NOT NULL,
    mime_type TEXT NOT NULL,
    size BIGINT NOT NULL CHECK (size >= 0),
    sha256 TEXT NOT NULL,
    storage_key TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX stored_files_storage_key_key ON stored_files (storage_key);

-- Education materials: a set of PDFs and videos that admins assign to users.
CREATE TABLE education_materials (
    id TEXT NOT NULL PRIMARY KEY,
    title TEXT NOT NULL,
    description TEXT,
    locale TEXT,
    target_language TEXT,
    level TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX education_materials_created_at_idx ON education_materials (created_at);
CREATE INDEX education_materials_locale_created_at_idx ON education_materials (locale, created_at);

-- PDFs of a material, ordered by position. file_id points at the stored file, which the
-- app deletes after removing the row (RESTRICT keeps a file in use from being deleted).
-- size is a copy of the file's size for listing without a join.
CREATE TABLE material_pdfs (
    id TEXT NOT NULL PRIMARY KEY,
    material_id TEXT NOT NULL REFERENCES education_materials (id) ON DELETE CASCADE,
    file_id TEXT NOT NULL REFERENCES stored_files (id) ON DELETE RESTRICT,
    title TEXT,
    size BIGINT NOT NULL CHECK (size >= 0),
    position BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX material_pdfs_material_id_position_idx ON material_pdfs (material_id, position);
-- Added: the RESTRICT check on deleting a stored file, and "is this file still used".
CREATE INDEX material_pdfs_file_id_idx ON material_pdfs (file_id);

-- Videos of a material (http(s) links), ordered by position.
CREATE TABLE material_videos (
    id TEXT NOT NULL PRIMARY KEY,
    material_id TEXT NOT NULL REFERENCES education_materials (id) ON DELETE CASCADE,
    title TEXT,
    url TEXT NOT NULL,
    position BIGINT NOT NULL
);

CREATE INDEX material_videos_material_id_position_idx ON material_videos (material_id, position);

-- Which user may read which material. assigned_by is the id of the admin who assigned
-- it, or NULL for the operator/system. It is a plain record with no foreign key, so
-- deleting that admin keeps the assignment.
CREATE TABLE material_assignments (
    material_id TEXT NOT NULL REFERENCES education_materials (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    assigned_at BIGINT NOT NULL,
    assigned_by TEXT,
    PRIMARY KEY (material_id, user_id)
);

CREATE INDEX material_assignments_user_id_assigned_at_idx ON material_assignments (user_id, assigned_at);
CREATE INDEX material_assignments_assigned_at_idx ON material_assignments (assigned_at);

-- Contact requests from the public form. reply_message and replied_at hold the latest
-- admin reply (a later reply replaces them). source says where the form was sent from.
CREATE TABLE contacts (
    id TEXT NOT NULL PRIMARY KEY,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    email TEXT NOT NULL,
    phone TEXT,
    message TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'IN_PROGRESS', 'REPLIED', 'CLOSED')),
    reply_message TEXT,
    source TEXT,
    replied_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX contacts_created_at_idx ON contacts (created_at);
CREATE INDEX contacts_status_created_at_idx ON contacts (status, created_at);

-- Key-value settings. value is a JSON value (never JSON null) stored as TEXT.
CREATE TABLE settings (
    key TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Durable mail queue, written in the same transaction as the action and drained by a
-- background worker. sealed is the AEAD ciphertext of the whole message (the OTP code
-- must never rest in plain text), set to NULL once delivered. A worker claims a row by
-- setting lease_owner and lease_until, so several servers can share the queue.
-- next_attempt_at drives retries with back-off. expires_at is set for OTP mails, which
-- are dropped (status 'expired') when their code expires. last_error keeps the latest
-- delivery failure.
CREATE TABLE mail_outbox (
    id TEXT NOT NULL PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('otp', 'contact_reply', 'material_assignment')),
    recipient TEXT NOT NULL,
    sealed BYTEA,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed', 'expired')),
    attempts BIGINT NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at BIGINT NOT NULL,
    lease_until BIGINT,
    lease_owner TEXT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    sent_at BIGINT
);

CREATE INDEX mail_outbox_status_next_attempt_at_idx ON mail_outbox (status, next_attempt_at);
CREATE INDEX mail_outbox_created_at_idx ON mail_outbox (created_at);
