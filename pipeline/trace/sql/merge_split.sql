-- reads: selected_ranges, classified, kernel_names, operator_work, merged_keys
-- creates: all_ranges, all_classified, all_kernel_names, all_operator_work
-- The window of several files built as one (merge_files.sql) left as rank_collect.sql and classify_collect.sql
-- leave the files' windows built one by one, so rank_combine.sql and classify_combine.sql combine them the same:
-- each row gets its file back (the bits merge_files.sql put it in) and its own process key (the file's host in
-- bits 48+, merge_keys.sql) and device id. Name ids stay the merged window's: every file is given every name,
-- and classify_combine.sql numbers names by what they are, not by id. The counted FLOPs have no process key: the
-- merged window's rows are the files' rows summed (merged_place.sql: the files all placed kernels, or none), which
-- counted_flops.sql, their one reader once combined, sums anyway (every call's FLOPs are even, so its halves too).
-- Rows are not sorted by file: rank_combine.sql and classify_combine.sql key them by (file, id) through joins.
CREATE OR REPLACE TEMP TABLE all_ranges AS
SELECT CAST(r.global_pid >> 48 AS INTEGER) AS file,
       r.* REPLACE ((r.global_pid & 281474976710655) | (CAST(k.host AS BIGINT) << 48) AS global_pid,
                    (r.global_tid & 281474976710655) | (CAST(k.host AS BIGINT) << 48) AS global_tid)
FROM selected_ranges AS r
JOIN merged_keys AS k ON k.file = r.global_pid >> 48;
CREATE OR REPLACE TEMP TABLE all_classified AS
SELECT CAST(c.global_pid >> 48 AS INTEGER) AS file,
       c.* REPLACE ((c.global_pid & 281474976710655) | (CAST(k.host AS BIGINT) << 48) AS global_pid,
                    c.device_id & 4294967295 AS device_id)
FROM classified AS c
JOIN merged_keys AS k ON k.file = c.global_pid >> 48;
CREATE OR REPLACE TEMP TABLE all_kernel_names AS
SELECT CAST(k.file AS INTEGER) AS file, n.*
FROM merged_keys AS k, kernel_names AS n
ORDER BY file, n.name_id;
CREATE OR REPLACE TEMP TABLE all_operator_work AS
SELECT CAST(0 AS INTEGER) AS file, * FROM operator_work;
-- every row found its file: a row without a process key would be lost, and the files are built one by one instead
SELECT (SELECT count(*) FROM classified) - (SELECT count(*) FROM all_classified) AS lost_kernels,
       (SELECT count(*) FROM selected_ranges) - (SELECT count(*) FROM all_ranges) AS lost_ranges
