-- reads: history
-- creates: -
-- The trend per job: every run in order, with the change of MFU and step time since the job's
-- previous run (NULL for its first), and both runs' per-occurrence samples for the change test.
-- Rows from format 1 (no format_version) count as format 1; mfu_pct_wall_min is the job's MFU threshold
-- at that run (NULL when unset or not stored).
SELECT
    job, run, label, config_sha256, trace_sha256, status, mfu_pct_wall, step_time_median_s, tokens_per_s,
    straggler_s, samples_field, step_samples_s, mfu_samples_pct, coalesce(format_version, 1) AS format_version,
    mfu_pct_wall_min,
    mfu_pct_wall - lag(mfu_pct_wall) OVER w AS mfu_change_pt,
    100.0 * (mfu_pct_wall / lag(mfu_pct_wall) OVER w - 1) AS mfu_change_pct,
    100.0 * (step_time_median_s / lag(step_time_median_s) OVER w - 1) AS step_change_pct,
    lag(step_samples_s) OVER w AS previous_step_samples_s,
    lag(mfu_samples_pct) OVER w AS previous_mfu_samples_pct,
    lag(config_sha256) OVER w AS previous_config_sha256,
    lag(trace_sha256) OVER w AS previous_trace_sha256
FROM history
WINDOW w AS (PARTITION BY job ORDER BY run)
ORDER BY job, run;
