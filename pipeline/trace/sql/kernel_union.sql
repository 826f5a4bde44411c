-- reads: attributed, interval_islands
-- creates: kernel_union
-- Sum, count and union of attributed kernel intervals per occurrence, over all devices
-- (device_id NULL: "at least one GPU busy") and per device (SEMANTICS §5), by the island
-- rule of interval_islands (views.sql).
CREATE OR REPLACE TEMP TABLE kernel_union AS
WITH scoped AS (
    SELECT {'occurrence': occurrence, 'device_id': CAST(NULL AS BIGINT)} AS grp, start_ns, end_ns
    FROM attributed
    UNION ALL
    SELECT {'occurrence': occurrence, 'device_id': device_id}, start_ns, end_ns
    FROM attributed
)
SELECT
    grp.occurrence AS occurrence,
    grp.device_id AS device_id,
    sum(end_ns - start_ns) AS union_ns,
    sum(sum_ns) AS sum_ns,
    sum(interval_count) AS kernel_count,
    max(end_ns) AS last_end_ns
FROM interval_islands('scoped')
GROUP BY grp;
