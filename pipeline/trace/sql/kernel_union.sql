-- reads: attributed, interval_union
-- creates: attributed_unions, kernel_union
-- Every union of attributed kernels the report needs, in one pass of interval_union (macros.sql):
--   occurrence    per occurrence, over all devices ("at least one GPU busy", SEMANTICS §5)
--   device        per occurrence and device
--   rank          per occurrence and process (rank_union.sql)
--   total         over all selected occurrences at once (SEMANTICS §6: overlapping occurrences
--                 count once), and total_device the same per device (occurrence_totals.sql)
-- `kernel_union` keeps the per-occurrence rows (device_id NULL: all devices) for
-- occurrence_times.sql and device_times.sql.
CREATE OR REPLACE TEMP TABLE attributed_unions AS
WITH scoped AS (
    SELECT 'occurrence' AS scope, occurrence AS k1, CAST(NULL AS BIGINT) AS k2, start_ns, end_ns FROM attributed
    UNION ALL
    SELECT 'device', occurrence, device_id, start_ns, end_ns FROM attributed WHERE device_id IS NOT NULL
    UNION ALL
    SELECT 'rank', occurrence, global_pid, start_ns, end_ns FROM attributed
    UNION ALL
    SELECT 'total', NULL, NULL, start_ns, end_ns FROM attributed
    UNION ALL
    SELECT 'total_device', NULL, device_id, start_ns, end_ns FROM attributed WHERE device_id IS NOT NULL
)
SELECT * FROM interval_union('scoped');

CREATE OR REPLACE TEMP TABLE kernel_union AS
SELECT k1 AS occurrence, CASE WHEN scope = 'device' THEN k2 END AS device_id,
       union_ns, sum_ns, interval_count AS kernel_count, last_end_ns
FROM attributed_unions
WHERE scope IN ('occurrence', 'device');
