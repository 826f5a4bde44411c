-- reads: history
-- creates: -
-- The trend per job: every run in order, with the change of MFU and step time since the
-- job's previous run (NULL for its first).
SELECT
    job, run, config_sha256, trace_sha256, status, mfu_pct_wall, step_time_median_s, tokens_per_s, straggler_s,
    mfu_pct_wall - lag(mfu_pct_wall) OVER w AS mfu_change_pt,
    100.0 * (step_time_median_s / lag(step_time_median_s) OVER w - 1) AS step_change_pct
FROM history
WINDOW w AS (PARTITION BY job ORDER BY run)
ORDER BY job, run;
