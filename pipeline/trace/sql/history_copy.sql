-- reads: history
-- creates: history
-- A DuckDB history file, opened read-only, copied into a temporary `history` table (it shadows the
-- file's) so that a format-1 file can be migrated in memory for reading, never rewritten by a read.
CREATE TEMP TABLE history AS
SELECT * FROM main.history;
