-- Adaptive placement (CONTRACT §19, issue #34). Expand only: every new column is nullable
-- or has a default, so the release before this one keeps reading and writing tests and
-- results as it did (it sees an adaptive test as a fixed one without level ranges).

-- `fixed` (everything of §6) or `adaptive`. max_questions and level_messages (a JSON
-- object from CEFR level to message) are set on adaptive tests only.
ALTER TABLE proficiency_tests ADD COLUMN mode TEXT NOT NULL DEFAULT 'fixed' CHECK (mode IN ('fixed', 'adaptive'));
ALTER TABLE proficiency_tests ADD COLUMN max_questions BIGINT CHECK (max_questions IS NULL OR max_questions BETWEEN 5 AND 100);
ALTER TABLE proficiency_tests ADD COLUMN level_messages TEXT;

-- An adaptive question's CEFR level (A1..C2), its calibrated difficulty in logits (NULL:
-- the level's default) and how many answers of finished attempts it has had, counted by
-- the last calibration (`langcamp placement calibrate`).
ALTER TABLE test_questions ADD COLUMN level TEXT;
ALTER TABLE test_questions ADD COLUMN difficulty DOUBLE PRECISION;
ALTER TABLE test_questions ADD COLUMN answer_count BIGINT NOT NULL DEFAULT 0;

-- The final ability of an adaptive result and its standard error (logits); NULL on
-- results of fixed tests.
ALTER TABLE test_results ADD COLUMN ability DOUBLE PRECISION;
ALTER TABLE test_results ADD COLUMN standard_error DOUBLE PRECISION;

-- An attempt at an adaptive test. sequence is a JSON array of the questions asked, in
-- order, each with its difficulty when asked and, once answered, the option chosen and
-- whether it was right; the last one is the current question while the attempt is open.
-- answered counts the answered ones: an answer is one UPDATE conditional on it, so two
-- answers to the same question store one. A finished attempt names its result.
CREATE TABLE placement_attempts (
    id TEXT NOT NULL PRIMARY KEY,
    test_id TEXT NOT NULL REFERENCES proficiency_tests (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    sequence TEXT NOT NULL,
    answered BIGINT NOT NULL DEFAULT 0 CHECK (answered >= 0),
    started_at BIGINT NOT NULL,
    expires_at BIGINT,
    finished BIGINT NOT NULL DEFAULT 0 CHECK (finished IN (0, 1)),
    result_id TEXT REFERENCES test_results (id) ON DELETE SET NULL
);

-- One open attempt per user and test: starting again resumes it.
CREATE UNIQUE INDEX placement_attempts_open_key ON placement_attempts (user_id, test_id) WHERE finished = 0;
CREATE INDEX placement_attempts_test_id_idx ON placement_attempts (test_id);
CREATE INDEX placement_attempts_result_id_idx ON placement_attempts (result_id);
-- Calibration reads the results of adaptive tests by test.
CREATE INDEX test_results_test_id_ability_idx ON test_results (test_id) WHERE ability IS NOT NULL;
