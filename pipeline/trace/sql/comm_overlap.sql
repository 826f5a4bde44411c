-- reads: classified, interval_islands
-- creates: -
-- Communication overlap and idle time per occurrence and device (issue #5), kernels only.
-- Three unions per (occurrence, device) by the island rule of interval_islands: every
-- kernel ('busy'), compute kernels (class <> $comm_class), communication kernels. Then
--   exposed = busy - compute      communication time with no compute kernel running
--   hidden  = comm - exposed      communication time under some compute kernel
--   idle    = wall - busy         no kernel at all, inside the occurrence's wall
-- $occurrences / $walls_ns give each occurrence's wall (SEMANTICS §5, from
-- occurrence_times.sql) and $devices the devices to report, so a device with no kernel
-- in an occurrence still shows that occurrence as idle.
WITH scoped AS (
    SELECT {'occurrence': occurrence, 'device_id': device_id, 'part': 'busy'} AS grp, start_ns, end_ns
    FROM classified WHERE kind = 'kernel'
    UNION ALL
    SELECT {'occurrence': occurrence, 'device_id': device_id,
            'part': CASE WHEN class = $comm_class THEN 'comm' ELSE 'compute' END},
           start_ns, end_ns
    FROM classified WHERE kind = 'kernel'
),
unions AS (
    SELECT grp.occurrence AS occurrence, grp.device_id AS device_id,
           sum(end_ns - start_ns) FILTER (WHERE grp.part = 'busy') AS busy_ns,
           sum(end_ns - start_ns) FILTER (WHERE grp.part = 'compute') AS compute_ns,
           sum(end_ns - start_ns) FILTER (WHERE grp.part = 'comm') AS comm_ns
    FROM interval_islands('scoped')
    GROUP BY grp.occurrence, grp.device_id
),
walls AS (
    SELECT $occurrences[i] AS occurrence, $walls_ns[i] AS wall_ns
    FROM range(1, len($occurrences) + 1) AS t(i)
),
grid AS (
    SELECT w.occurrence, w.wall_ns, d.device_id
    FROM walls AS w
    CROSS JOIN (SELECT unnest($devices) AS device_id) AS d
),
per_occurrence AS (
    SELECT g.occurrence, g.device_id, g.wall_ns,
           coalesce(u.busy_ns, 0) AS busy_ns,
           coalesce(u.compute_ns, 0) AS compute_ns,
           coalesce(u.comm_ns, 0) AS comm_ns
    FROM grid AS g
    LEFT JOIN unions AS u ON u.occurrence = g.occurrence AND u.device_id = g.device_id
)
SELECT
    device_id,
    CAST(sum(wall_ns) AS BIGINT) AS wall_ns,
    CAST(sum(busy_ns) AS BIGINT) AS busy_ns,
    CAST(sum(compute_ns) AS BIGINT) AS compute_ns,
    CAST(sum(comm_ns) AS BIGINT) AS comm_ns,
    CAST(sum(busy_ns - compute_ns) AS BIGINT) AS exposed_ns,
    CAST(sum(comm_ns - (busy_ns - compute_ns)) AS BIGINT) AS hidden_ns,
    CAST(sum(wall_ns - busy_ns) AS BIGINT) AS idle_ns
FROM per_occurrence
GROUP BY device_id
ORDER BY device_id;
