-- reads: selected_ranges, operator_work
-- creates: all_ranges, all_operator_work
-- Keep the current file's selected ranges before the next file is attached on the same
-- connection: several trace files (one per rank or node) are measured in turn and combined by
-- rank_combine.sql (their classified kernels: classify_collect.sql). $file is the file's 0-based
-- position; file 0 clears what an earlier job on a shared connection left behind.
CREATE TEMP TABLE IF NOT EXISTS all_ranges AS
SELECT CAST(NULL AS INTEGER) AS file, * FROM selected_ranges WHERE false;
DELETE FROM all_ranges WHERE $file = 0;
INSERT INTO all_ranges SELECT $file, * FROM selected_ranges;
-- the counted FLOPs (operator_work.sql): rows per occurrence, no process or device key to map
CREATE TEMP TABLE IF NOT EXISTS all_operator_work AS
SELECT CAST(NULL AS INTEGER) AS file, * FROM operator_work WHERE false;
DELETE FROM all_operator_work WHERE $file = 0;
INSERT INTO all_operator_work SELECT $file, * FROM operator_work;
