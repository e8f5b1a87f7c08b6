-- Adaptive placement that knows students guess (issue #44). Expand only: a nullable column
-- the release before this one neither reads nor writes.

-- The common slope of an adaptive test's questions in the item-response model, estimated
-- from its finished attempts by `langcamp placement calibrate`; NULL until then (the
-- model's default slope, 1). Fixed tests leave it NULL.
ALTER TABLE proficiency_tests ADD COLUMN slope DOUBLE PRECISION CHECK (slope IS NULL OR slope > 0);
