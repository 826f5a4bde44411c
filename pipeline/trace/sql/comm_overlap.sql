-- reads: classified, interval_union
-- creates: -
-- Communication overlap and idle time per device (issue #5), kernels only, over all selected
-- occurrences at once (SEMANTICS §6). Three unions per device in one pass of interval_union:
-- every kernel ('busy'), compute kernels (class <> $comm_class), communication kernels. Then
--   exposed = busy - compute      communication time with no compute kernel running
--   hidden  = comm - exposed      communication time under some compute kernel
--   idle    = wall - busy         no kernel at all, inside the occurrences' wall
-- $wall_ns is the total wall (union of the occurrence envelopes, occurrence_totals.sql) and
-- $devices the devices to report, so a device with no kernel shows its whole wall as idle.
WITH scoped AS (
    SELECT 'busy' AS scope, device_id AS k1, CAST(NULL AS BIGINT) AS k2, start_ns, end_ns
    FROM classified WHERE kind = 'kernel'
    UNION ALL
    SELECT CASE WHEN class = $comm_class THEN 'comm' ELSE 'compute' END, device_id, NULL, start_ns, end_ns
    FROM classified WHERE kind = 'kernel'
),
unions AS (
    SELECT k1 AS device_id,
           sum(union_ns) FILTER (WHERE scope = 'busy') AS busy_ns,
           sum(union_ns) FILTER (WHERE scope = 'compute') AS compute_ns,
           sum(union_ns) FILTER (WHERE scope = 'comm') AS comm_ns
    FROM interval_union('scoped')
    GROUP BY k1
),
per_device AS (
    SELECT d.device_id, CAST($wall_ns AS BIGINT) AS wall_ns,
           coalesce(u.busy_ns, 0) AS busy_ns,
           coalesce(u.compute_ns, 0) AS compute_ns,
           coalesce(u.comm_ns, 0) AS comm_ns
    FROM (SELECT unnest($devices) AS device_id) AS d
    LEFT JOIN unions AS u ON u.device_id = d.device_id
)
SELECT
    device_id,
    wall_ns,
    CAST(busy_ns AS BIGINT) AS busy_ns,
    CAST(compute_ns AS BIGINT) AS compute_ns,
    CAST(comm_ns AS BIGINT) AS comm_ns,
    CAST(busy_ns - compute_ns AS BIGINT) AS exposed_ns,
    CAST(comm_ns - (busy_ns - compute_ns) AS BIGINT) AS hidden_ns,
    CAST(wall_ns - busy_ns AS BIGINT) AS idle_ns
FROM per_device
ORDER BY device_id;
