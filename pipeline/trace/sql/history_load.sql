-- reads: -
-- creates: history
-- A history folder's Parquet files (one per run) as the `history` table that history_trend reads,
-- so both history forms render through the same query. Columns are named, not `*`: a Parquet
-- file that is not an mfu history fails here with the missing column's name.
CREATE TEMP TABLE history AS
SELECT run, job, config_sha256, trace_sha256, status, mfu_pct_wall, hfu_pct_wall, step_time_median_s,
       tokens_per_s, straggler_s
FROM read_parquet($files, union_by_name = true);
