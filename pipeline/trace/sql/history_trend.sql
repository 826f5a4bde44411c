-- reads: history
-- creates: -
-- The trend per job: every run in order, with the change of MFU and step time since the job's
-- previous valid run (NULL for its first), and both runs' per-occurrence samples for the change test.
-- An invalid run's figures are no measurement (docs/figures.md §6: never a plain result): it gets no change and
-- is no run the next one is compared with, as `mfu compare` compares nothing with an invalid result.
-- A failed run (format 4: the job ended without a result) has no figures: the same holds for it.
-- Rows from format 1 (no format_version) count as format 1; mfu_pct_wall_min is the job's MFU threshold
-- at that run (NULL when unset or not stored). Both runs' comparability inputs (JSON, NULL before format 3)
-- go to history.py, which applies `mfu compare`'s rules to them: a figure they make incomparable is no change
-- to flag, and the run is still the one the next run is compared with (the new baseline).
-- Only each job's $recent latest runs are returned (issue #33: a history of 100,000 runs took minutes to
-- fetch, test and render); their previous runs are found among all of them. history_older.sql summarises
-- the runs left out.
WITH all_runs AS (
    SELECT *,
           max(CASE WHEN coalesce(status NOT IN ('invalid', 'failed'), true) THEN run END) OVER (
               PARTITION BY job ORDER BY run ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS previous_run,
           row_number() OVER (PARTITION BY job ORDER BY run DESC) AS nth_latest
    FROM history
),
h AS (
    SELECT * EXCLUDE (nth_latest), coalesce(status IN ('invalid', 'failed'), false) AS unmeasured
    FROM all_runs
    WHERE nth_latest <= $recent
)
SELECT
    h.job, h.run, h.label, h.config_sha256, h.trace_sha256, h.status, h.mfu_pct_wall, h.step_time_median_s,
    h.tokens_per_s, h.straggler_s, h.samples_field, h.step_samples_s, h.mfu_samples_pct,
    coalesce(h.format_version, 1) AS format_version, h.mfu_pct_wall_min, h.comparability_inputs,
    h.exit_code, h.error, h.what_ran,
    CASE WHEN NOT h.unmeasured THEN h.mfu_pct_wall - p.mfu_pct_wall END AS mfu_change_pt,
    CASE WHEN NOT h.unmeasured THEN 100.0 * (h.mfu_pct_wall / p.mfu_pct_wall - 1) END AS mfu_change_pct,
    CASE WHEN NOT h.unmeasured THEN 100.0 * (h.step_time_median_s / p.step_time_median_s - 1) END AS step_change_pct,
    p.step_samples_s AS previous_step_samples_s,
    p.mfu_samples_pct AS previous_mfu_samples_pct,
    p.config_sha256 AS previous_config_sha256,
    p.trace_sha256 AS previous_trace_sha256,
    h.previous_run,
    p.comparability_inputs AS previous_comparability_inputs,
    p.what_ran AS previous_what_ran
FROM h
LEFT JOIN history AS p ON p.job = h.job AND p.run = h.previous_run
ORDER BY h.job, h.run;
