-- The reporting schema (CONTRACT §18, issue 33): read-only views over the school's data
-- with native types, for an analyst's Metabase, Grafana or psql. docs/OPERATIONS.md
-- ("Reporting") shows a role that can read only this schema.
--
-- Each view is its table's columns with the application's encodings undone: epoch
-- milliseconds (BIGINT) become timestamptz, 0/1 become boolean, minor units of a price
-- become a numeric in the currency, JSON kept as TEXT becomes jsonb, 'YYYY-MM-DD' becomes
-- date. Never here: sign-in codes and their log, sessions, refresh tokens, revoked token
-- ids, the mail outbox, the statistics rollups, the file store's usage counter, and the
-- stored files' keys in the file store.
--
-- PostgreSQL only: SQLite has no schemas (its migrations have no 0100).
--
-- Expand-only: a release before this one never reads the schema. A later migration that
-- drops, renames or retypes a column shown here must replace the view in the same file
-- (PostgreSQL refuses to drop a column a view uses); CREATE OR REPLACE VIEW keeps the
-- grants of the reporting role.
CREATE SCHEMA IF NOT EXISTS reporting;

COMMENT ON SCHEMA reporting IS
    'Read-only views of the school''s data with native types (Langcamp, CONTRACT §18)';

CREATE VIEW reporting.users AS
SELECT id, email, name, role,
       is_registration_complete <> 0 AS is_registration_complete,
       age, gender, city, country, country_code, phone_number, locale,
       to_timestamp(created_at / 1000.0) AS created_at,
       to_timestamp(updated_at / 1000.0) AS updated_at
FROM users;

CREATE VIEW reporting.courses AS
SELECT id, title, summary, description, target_language, level, locale, image_url, location,
       CAST(start_date AS date) AS start_date,
       CAST(end_date AS date) AS end_date,
       -- The currency's minor unit, as the application knows it (langcamp-core/src/money.rs).
       ROUND(CAST(price_minor AS numeric) / CASE
               WHEN currency IN ('BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG',
                                 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF') THEN 1
               WHEN currency IN ('BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND') THEN 1000
               WHEN currency IN ('CLF', 'UYW') THEN 10000
               ELSE 100
             END, CASE
               WHEN currency IN ('BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG',
                                 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF') THEN 0
               WHEN currency IN ('BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND') THEN 3
               WHEN currency IN ('CLF', 'UYW') THEN 4
               ELSE 2
             END) AS price,
       currency, capacity,
       is_published <> 0 AS is_published,
       sort_order,
       to_timestamp(created_at / 1000.0) AS created_at,
       to_timestamp(updated_at / 1000.0) AS updated_at
FROM courses;

CREATE VIEW reporting.proficiency_tests AS
SELECT id, title, description, locale, target_language, time_limit_minutes,
       is_active <> 0 AS is_active,
       question_count, max_score,
       to_timestamp(created_at / 1000.0) AS created_at,
       to_timestamp(updated_at / 1000.0) AS updated_at
FROM proficiency_tests;

-- With the answer key: the schema is for staff's analysts, as the admin API is.
CREATE VIEW reporting.test_questions AS
SELECT id, test_id, position, text, points, correct_option_id
FROM test_questions;

CREATE VIEW reporting.test_options AS
SELECT id, question_id, position, text
FROM test_options;

CREATE VIEW reporting.test_level_ranges AS
SELECT id, test_id, position, level, min_score, max_score, message
FROM test_level_ranges;

CREATE VIEW reporting.test_results AS
SELECT id, test_id, user_id, test_title, target_language, total_score, max_score, level,
       message,
       CAST(answers AS jsonb) AS answers,
       to_timestamp(completed_at / 1000.0) AS completed_at
FROM test_results;

CREATE VIEW reporting.stored_files AS
SELECT id, original_name, mime_type, size, sha256,
       to_timestamp(created_at / 1000.0) AS created_at
FROM stored_files;

CREATE VIEW reporting.education_materials AS
SELECT id, title, description, locale, target_language, level,
       to_timestamp(created_at / 1000.0) AS created_at,
       to_timestamp(updated_at / 1000.0) AS updated_at
FROM education_materials;

CREATE VIEW reporting.material_pdfs AS
SELECT id, material_id, file_id, title, size, position,
       to_timestamp(created_at / 1000.0) AS created_at
FROM material_pdfs;

CREATE VIEW reporting.material_videos AS
SELECT id, material_id, title, url, position
FROM material_videos;

CREATE VIEW reporting.material_assignments AS
SELECT material_id, user_id,
       to_timestamp(assigned_at / 1000.0) AS assigned_at,
       assigned_by
FROM material_assignments;

CREATE VIEW reporting.contacts AS
SELECT id, first_name, last_name, email, phone, message, status, reply_message, source,
       locale,
       to_timestamp(replied_at / 1000.0) AS replied_at,
       to_timestamp(created_at / 1000.0) AS created_at,
       to_timestamp(updated_at / 1000.0) AS updated_at
FROM contacts;

CREATE VIEW reporting.settings AS
SELECT key,
       CAST(value AS jsonb) AS value,
       to_timestamp(updated_at / 1000.0) AS updated_at
FROM settings;

CREATE VIEW reporting.mail_templates AS
SELECT kind, locale, subject, text_body, html_body,
       to_timestamp(updated_at / 1000.0) AS updated_at
FROM mail_templates;
