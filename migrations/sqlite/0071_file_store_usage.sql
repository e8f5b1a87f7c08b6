-- The bytes of all stored files together, kept exact by triggers in the same transaction
-- as every insert and delete of stored_files, so FILE_STORE_MAX_BYTES is enforced from one
-- row that every instance sharing the database sees (never a per-process counter).
CREATE TABLE file_store_usage (
    id BIGINT NOT NULL PRIMARY KEY CHECK (id = 1),
    bytes BIGINT NOT NULL
);

INSERT INTO file_store_usage (id, bytes) SELECT 1, COALESCE(SUM(size), 0) FROM stored_files;

CREATE TRIGGER file_store_usage_insert AFTER INSERT ON stored_files BEGIN
    UPDATE file_store_usage SET bytes = bytes + NEW.size WHERE id = 1;
END;

CREATE TRIGGER file_store_usage_delete AFTER DELETE ON stored_files BEGIN
    UPDATE file_store_usage SET bytes = bytes - OLD.size WHERE id = 1;
END;

CREATE TRIGGER file_store_usage_update AFTER UPDATE OF size ON stored_files
WHEN OLD.size <> NEW.size BEGIN
    UPDATE file_store_usage SET bytes = bytes - OLD.size + NEW.size WHERE id = 1;
END;
