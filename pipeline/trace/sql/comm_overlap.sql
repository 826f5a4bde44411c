-- reads: window_unions
-- creates: -
-- Communication overlap and idle time per device (issue #5), kernels only, over all selected
-- occurrences at once (docs/figures.md §6). Three unions per device (window_unions.sql, kernel = 1):
-- every kernel ('total_device', the busy time), compute kernels ('part', comm = 0),
-- communication kernels ('part', comm = 1). Then
--   exposed = busy - compute      communication time with no compute kernel running
--   hidden  = comm - exposed      communication time under some compute kernel
--   idle    = wall - busy         no attributed kernel, inside the occurrences' wall
-- $wall_ns is the total wall (union of the occurrence envelopes, occurrence_totals.sql) and
-- $devices the devices to report, so a device with no kernel shows its whole wall as idle.
WITH unions AS (
    SELECT CASE WHEN scope = 'total_device' THEN k2 ELSE k3 END AS device_id,
           sum(union_ns) FILTER (WHERE scope = 'total_device') AS busy_ns,
           sum(union_ns) FILTER (WHERE scope = 'part' AND k2 = 0) AS compute_ns,
           sum(union_ns) FILTER (WHERE scope = 'part' AND k2 = 1) AS comm_ns
    FROM window_unions
    WHERE scope IN ('total_device', 'part') AND k1 = 1
    GROUP BY ALL
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
