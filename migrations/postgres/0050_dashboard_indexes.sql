-- Indexes for the admin dashboard (CONTRACT §11), whose statistics are aggregate queries.
--
-- The level and language distributions (count and total score per group) are one pass
-- over this covering index, never over the result rows, whose JSON answers make them
-- wide: GROUP BY level, target_language reads the index in order, and total_score is in it.
CREATE INDEX test_results_level_target_language_total_score_idx ON test_results (level, target_language, total_score);
