-- Sum, count and union of attributed kernel intervals per occurrence, over all devices
-- (device_id NULL: "at least one GPU busy") and per device (SEMANTICS §5).
-- Union: sort by (start, end); a kernel starting after the running maximum end of the
-- kernels before it opens a new island (touching intervals merge); islands add up.
CREATE OR REPLACE TEMP TABLE kernel_union AS
WITH scoped AS (
    SELECT occurrence, CAST(NULL AS BIGINT) AS device_id, start_ns, end_ns FROM attributed
    UNION ALL
    SELECT occurrence, device_id, start_ns, end_ns FROM attributed
),
marked AS (
    SELECT
        *,
        max(end_ns) OVER (PARTITION BY occurrence, device_id ORDER BY start_ns, end_ns
                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_ns
    FROM scoped
),
islands AS (
    SELECT
        *,
        sum(CASE WHEN prev_end_ns IS NULL OR start_ns > prev_end_ns THEN 1 ELSE 0 END)
            OVER (PARTITION BY occurrence, device_id ORDER BY start_ns, end_ns
                  ROWS UNBOUNDED PRECEDING) AS island
    FROM marked
),
merged AS (
    SELECT occurrence, device_id, island,
           min(start_ns) AS start_ns, max(end_ns) AS end_ns,
           sum(end_ns - start_ns) AS sum_ns, count(*) AS kernel_count
    FROM islands
    GROUP BY occurrence, device_id, island
)
SELECT
    occurrence,
    device_id,
    sum(end_ns - start_ns) AS union_ns,
    sum(sum_ns) AS sum_ns,
    sum(kernel_count) AS kernel_count,
    max(end_ns) AS last_end_ns
FROM merged
GROUP BY occurrence, device_id;
