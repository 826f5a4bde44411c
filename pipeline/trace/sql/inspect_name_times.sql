-- reads: classified, kernel_keys
-- creates: name_times
-- name_times.sql for `mfu inspect`: count and summed time of each kernel name id over the whole capture
-- (one pseudo-occurrence, 1), which precision_times.sql reads. classified holds one row per id triple
-- (inspect_all_kernels.sql: its occurrence is the triple's key_id), so the triple's kernels are counted
-- and summed from kernel_keys, not from classified's rows.
CREATE OR REPLACE TEMP TABLE name_times AS
SELECT 1 AS occurrence, c.name_id, CAST(sum(k.kernel_count) AS BIGINT) AS kernel_count, sum(k.sum_ns) AS sum_ns
FROM classified AS c
JOIN kernel_keys AS k ON k.key_id = c.occurrence
GROUP BY c.name_id
