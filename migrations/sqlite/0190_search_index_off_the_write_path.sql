-- The users' and contact requests' search indexes (0150's FTS5 trigram tables) are filled
-- in the background, not by the insert (issue #54: the insert triggers cost a contact
-- request 2.2-2.7 times and a first sign-in 23-30 %). A row is indexed by the search
-- indexer (langcamp-core/src/platform/db/search_index.rs) soon after it is written; until
-- then a search finds it by reading the rows after the mark, so a search stays exact.
--
-- search_marks: per table, the rowid up to which every row is indexed (`upto`), and the id
-- of the row there (`upto_id`). A new row's rowid is above every existing one, so it is
-- never at or below the mark; a copy that renumbers rowids (a restored `VACUUM INTO`) no
-- longer has `upto_id` at `upto`, and a search then reads every row until the indexer has
-- walked the table again.
DROP TRIGGER user_search_insert;
DROP TRIGGER contact_search_insert;

CREATE TABLE search_marks (
    name TEXT NOT NULL PRIMARY KEY,
    upto INTEGER NOT NULL,
    upto_id TEXT
);
-- Every existing row was indexed by 0150's triggers.
INSERT INTO search_marks (name, upto, upto_id)
    VALUES ('users', COALESCE((SELECT MAX(rowid) FROM users), 0), NULL),
           ('contacts', COALESCE((SELECT MAX(rowid) FROM contacts), 0), NULL);
UPDATE search_marks SET upto_id = (SELECT id FROM users WHERE rowid = search_marks.upto)
    WHERE name = 'users';
UPDATE search_marks SET upto_id = (SELECT id FROM contacts WHERE rowid = search_marks.upto)
    WHERE name = 'contacts';

-- Deleting the row at the mark moves the mark to the row before it: the mark always names
-- an existing row (or none, at 0), so a new row's rowid, one above the largest, is above it.
CREATE TRIGGER user_search_mark_delete AFTER DELETE ON users
WHEN OLD.rowid = (SELECT upto FROM search_marks WHERE name = 'users') BEGIN
    UPDATE search_marks
        SET upto = COALESCE((SELECT MAX(rowid) FROM users WHERE rowid < OLD.rowid), 0),
            upto_id = (SELECT id FROM users WHERE rowid < OLD.rowid ORDER BY rowid DESC LIMIT 1)
        WHERE name = 'users';
END;

CREATE TRIGGER contact_search_mark_delete AFTER DELETE ON contacts
WHEN OLD.rowid = (SELECT upto FROM search_marks WHERE name = 'contacts') BEGIN
    UPDATE search_marks
        SET upto = COALESCE((SELECT MAX(rowid) FROM contacts WHERE rowid < OLD.rowid), 0),
            upto_id = (SELECT id FROM contacts WHERE rowid < OLD.rowid ORDER BY rowid DESC LIMIT 1)
        WHERE name = 'contacts';
END;
