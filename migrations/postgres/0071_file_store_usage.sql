-- The bytes of all stored files together, kept exact by a trigger in the same transaction
-- as every insert and delete of stored_files, so FILE_STORE_MAX_BYTES is enforced from one
-- row that every instance sharing the database sees (never a per-process counter). The
-- trigger's UPDATE holds the row lock until commit, so concurrent uploads are counted one
-- after the other and a check of the total inside the transaction is exact.
CREATE TABLE file_store_usage (
    id BIGINT NOT NULL PRIMARY KEY CHECK (id = 1),
    bytes BIGINT NOT NULL
);

INSERT INTO file_store_usage (id, bytes)
SELECT 1, CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM stored_files;

CREATE FUNCTION file_store_usage() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE file_store_usage SET bytes = bytes + NEW.size WHERE id = 1;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE file_store_usage SET bytes = bytes - OLD.size WHERE id = 1;
    ELSE
        UPDATE file_store_usage SET bytes = bytes - OLD.size + NEW.size WHERE id = 1;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER file_store_usage AFTER INSERT OR DELETE ON stored_files
    FOR EACH ROW EXECUTE FUNCTION file_store_usage();
CREATE TRIGGER file_store_usage_update AFTER UPDATE OF size ON stored_files
    FOR EACH ROW WHEN (OLD.size <> NEW.size) EXECUTE FUNCTION file_store_usage();
