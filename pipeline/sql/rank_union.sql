-- Per rank (process) and selected occurrence: the union of the kernel intervals it launched,
-- its own "GPU busy" time (SEMANTICS §5 union algorithm, partitioned by process).
WITH marked AS (
    SELECT
        occurrence, global_pid, start_ns, end_ns,
        max(end_ns) OVER (PARTITION BY occurrence, global_pid ORDER BY start_ns, end_ns
                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_ns
    FROM attributed
),
islands AS (
    SELECT
        *,
        sum(CASE WHEN prev_end_ns IS NULL OR start_ns > prev_end_ns THEN 1 ELSE 0 END)
            OVER (PARTITION BY occurrence, global_pid ORDER BY start_ns, end_ns
                  ROWS UNBOUNDED PRECEDING) AS island
    FROM marked
),
merged AS (
    SELECT occurrence, global_pid, island, max(end_ns) - min(start_ns) AS length_ns
    FROM islands
    GROUP BY occurrence, global_pid, island
)
SELECT occurrence, global_pid, sum(length_ns) AS union_ns
FROM merged
GROUP BY occurrence, global_pid
ORDER BY occurrence, global_pid;
