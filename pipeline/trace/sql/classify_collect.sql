-- reads: classified, kernel_names
-- creates: all_classified, all_kernel_names
-- Keep the current file's classified kernels and memory operations, and the names their name_id
-- points to, before the next file is attached on the same connection. Kernel names are resolved
-- against each file's own StringIds (ids differ per file), so classification happens per file
-- while that file is in use; classify_combine.sql then puts the rows on the combined rank,
-- device and name keys. $file is the file's 0-based position; file 0 clears what an earlier job
-- left behind.
CREATE TEMP TABLE IF NOT EXISTS all_classified AS
SELECT CAST(NULL AS INTEGER) AS file, * FROM classified WHERE false;
CREATE TEMP TABLE IF NOT EXISTS all_kernel_names AS
SELECT CAST(NULL AS INTEGER) AS file, * FROM kernel_names WHERE false;
DELETE FROM all_classified WHERE $file = 0;
DELETE FROM all_kernel_names WHERE $file = 0;
INSERT INTO all_classified SELECT $file, * FROM classified;
INSERT INTO all_kernel_names SELECT $file, * FROM kernel_names;
