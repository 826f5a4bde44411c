-- Attributed kernels whose name matches the RE2 pattern $pattern: count, sum, and the sum
-- over devices of each device's union (GPU-seconds, for per-GPU rates of user figures).
WITH hit AS (
    SELECT occurrence, device_id, start_ns, end_ns FROM classified
    WHERE regexp_matches(name, $pattern)
),
marked AS (
    SELECT *,
           max(end_ns) OVER (PARTITION BY occurrence, device_id ORDER BY start_ns, end_ns
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_ns
    FROM hit
),
islands AS (
    SELECT *,
           sum(CASE WHEN prev_end_ns IS NULL OR start_ns > prev_end_ns THEN 1 ELSE 0 END)
               OVER (PARTITION BY occurrence, device_id ORDER BY start_ns, end_ns
                     ROWS UNBOUNDED PRECEDING) AS island
    FROM marked
),
merged AS (
    SELECT max(end_ns) - min(start_ns) AS len, sum(end_ns - start_ns) AS sum_ns, count(*) AS n
    FROM islands GROUP BY occurrence, device_id, island
)
SELECT CAST(coalesce(sum(n), 0) AS BIGINT) AS kernel_count,
       CAST(coalesce(sum(sum_ns), 0) AS BIGINT) AS sum_ns,
       CAST(coalesce(sum(len), 0) AS BIGINT) AS device_union_ns
FROM merged;
