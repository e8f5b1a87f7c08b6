-- The second step's lock per account (CONTRACT §22, NIST SP 800-63B §5.2.2). Expand only.
--
-- failures counts the wrong second-factor answers in a row of one account, across its
-- sign-ins (a right answer starts it again); the tenth locks the account's second step
-- until locked_until (epoch ms), and every answer before then is refused unchecked. A
-- row exists only for an account that has answered wrong.
CREATE TABLE second_factor_failures (
    user_id TEXT NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    failures BIGINT NOT NULL CHECK (failures >= 0),
    locked_until BIGINT
);
