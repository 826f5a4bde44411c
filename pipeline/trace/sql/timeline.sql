-- reads: selected_ranges, occurrence_times, timeline_islands
-- creates: -
-- One step drawn to scale (the report's timeline, issue 14): for occurrence $occurrence, per
-- device in $devices, the islands of compute, communication and memory activity, the idle
-- stretches (no attributed kernel) inside the step's wall, and the NVTX range envelope.
-- Intervals less than $min_gap_ns apart are joined (the gap is under one pixel of the chart),
-- so the row count follows the chart's width, not the number of kernels (timeline_islands.sql
-- joins them). Times are nanoseconds from the step's start (the earliest range start, as for
-- the wall: docs/figures.md §5); the step ends where its wall does (occurrence_times.sql: the later of
-- the last range end and the last kernel end), not scanning the kernels again for it.
WITH span AS (
    SELECT min(start_ns) AS t0_ns, max(end_ns) AS range_end_ns
    FROM selected_ranges
    WHERE occurrence = $occurrence
),
wall AS (
    SELECT s.t0_ns, s.range_end_ns, o.start_ns + o.wall_ns AS t1_ns
    FROM span AS s
    JOIN occurrence_times AS o ON o.occurrence = $occurrence
),
islands AS (
    SELECT k1 AS device_id, CASE WHEN scope = 'busy' THEN 'busy' WHEN k2 = 0 THEN 'memory'
                                 WHEN k2 = 1 THEN 'communication' ELSE 'compute' END AS lane,
           start_ns, end_ns - $min_gap_ns AS end_ns
    FROM timeline_islands
    WHERE scope = 'lane' OR k2 = 1                  -- busy: the islands of kernels, not of memory operations
),
busy AS (
    SELECT d.device_id, b.start_ns, b.end_ns
    FROM (SELECT unnest($devices) AS device_id) AS d
    LEFT JOIN islands AS b ON b.device_id = d.device_id AND b.lane = 'busy'
),
idle AS (
    SELECT device_id,
           coalesce(lag(end_ns) OVER (PARTITION BY device_id ORDER BY start_ns), (SELECT t0_ns FROM wall)) AS start_ns,
           coalesce(start_ns, (SELECT t1_ns FROM wall)) AS end_ns
    FROM busy
    UNION ALL
    SELECT device_id, max(end_ns), (SELECT t1_ns FROM wall)
    FROM busy
    GROUP BY device_id
    HAVING max(end_ns) IS NOT NULL
),
lanes AS (
    SELECT lane, device_id, start_ns, end_ns FROM islands WHERE lane <> 'busy'
    UNION ALL
    SELECT 'idle', device_id, start_ns, end_ns FROM idle WHERE end_ns > start_ns
    UNION ALL
    SELECT 'nvtx', NULL, t0_ns, range_end_ns FROM wall
    UNION ALL
    SELECT 'wall', NULL, t0_ns, t1_ns FROM wall
)
SELECT l.lane, l.device_id, l.start_ns - w.t0_ns AS start_ns, l.end_ns - w.t0_ns AS end_ns
FROM lanes AS l, wall AS w
ORDER BY l.device_id NULLS FIRST, l.lane, l.start_ns;
