-- reads: history
-- creates: -
-- Per job, the runs history_trend.sql leaves out (all but the job's $recent latest; issue #33), summarised for
-- history.json and the pages: how many, the first and last of their run numbers, how many were invalid or
-- failed, and the least, median and greatest MFU (wall) of the others. Jobs with no run left out have no row.
WITH ranked AS (
    SELECT job, run, status, mfu_pct_wall,
           row_number() OVER (PARTITION BY job ORDER BY run DESC) AS nth_latest
    FROM history
)
SELECT job,
       count(*) AS runs,
       min(run) AS first_run,
       max(run) AS last_run,
       count(*) FILTER (WHERE status = 'invalid') AS invalid_runs,
       count(*) FILTER (WHERE status = 'failed') AS failed_runs,
       min(mfu_pct_wall) FILTER (WHERE coalesce(status NOT IN ('invalid', 'failed'), true)) AS mfu_pct_wall_min,
       quantile_cont(mfu_pct_wall, 0.5) FILTER (WHERE coalesce(status NOT IN ('invalid', 'failed'), true))
           AS mfu_pct_wall_median,
       max(mfu_pct_wall) FILTER (WHERE coalesce(status NOT IN ('invalid', 'failed'), true)) AS mfu_pct_wall_max
FROM ranked
WHERE nth_latest > $recent
GROUP BY job
ORDER BY job;
