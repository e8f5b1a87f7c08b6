-- What migration 0150 (issue #54, the lists at scale) adds to every write, taken away
-- after bench.sh's seed: `scripts/bench.sh --postgres URL --after-seed
-- scripts/bench/without-0150.postgres.sql` measures the writes as they were before it, on
-- the same data, so a run with it and one without say what the lists' indexes and counts
-- cost a submission, a sign-up and a contact request. The lists then answer wrong totals:
-- measure writes only.
DROP TRIGGER stats_users_completed_role ON users;
DROP TRIGGER stats_users_completed_role_update ON users;
DROP TRIGGER stats_result_tests ON test_results;
DROP TRIGGER stats_result_tests_update ON test_results;
DROP TRIGGER stats_audit_days ON audit_events;
DROP INDEX users_search_idx;
DROP INDEX contacts_search_idx;
DROP INDEX audit_events_actor_email_at_idx;
DROP INDEX test_results_level_language_completed_at_idx;
