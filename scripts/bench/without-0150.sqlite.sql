-- What migration 0150 (issue #54, the lists at scale) adds to every write, taken away
-- after bench.sh's seed: `scripts/bench.sh --after-seed scripts/bench/without-0150.sqlite.sql`
-- measures the writes as they were before it (see without-0150.postgres.sql).
-- (The two insert triggers went in 0190, which fills the search tables in the background.)
DROP TRIGGER IF EXISTS user_search_insert;
DROP TRIGGER user_search_update;
DROP TRIGGER user_search_delete;
DROP TRIGGER IF EXISTS contact_search_insert;
DROP TRIGGER contact_search_update;
DROP TRIGGER contact_search_delete;
DROP TRIGGER stats_users_completed_role_insert;
DROP TRIGGER stats_users_completed_role_delete;
DROP TRIGGER stats_users_completed_role_update;
DROP TRIGGER stats_result_tests_insert;
DROP TRIGGER stats_result_tests_delete;
DROP TRIGGER stats_result_tests_update;
DROP TRIGGER stats_audit_days_insert;
DROP TRIGGER stats_audit_days_delete;
DROP INDEX audit_events_actor_email_at_idx;
DROP INDEX test_results_level_language_completed_at_idx;
