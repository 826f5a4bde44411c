-- reads: timeline_busy, selected_ranges, occurrence_times
-- creates: -
-- Per device in $devices, how long each lane of the timeline of occurrence $occurrence was active
-- inside the step's wall (timeline_busy.sql: exact, unlike the drawn islands), and idle = the wall
-- less the union of all the device's kernels (scope busy), as in timeline.sql: from the earliest range
-- start to the wall's end (occurrence_times.sql). A device with no kernel idles the whole step.
WITH wall AS (
    SELECT min(s.start_ns) AS t0_ns, any_value(o.start_ns + o.wall_ns) AS t1_ns
    FROM selected_ranges AS s
    JOIN occurrence_times AS o ON o.occurrence = s.occurrence
    WHERE s.occurrence = $occurrence
),
devices AS (
    SELECT unnest($devices) AS device_id
),
lanes AS (
    SELECT * FROM (VALUES (0, 'memory'), (1, 'communication'), (2, 'compute')) AS l(code, lane)
)
SELECT d.device_id, l.lane, coalesce(b.union_ns, 0) AS lane_ns
FROM devices AS d
CROSS JOIN lanes AS l
LEFT JOIN timeline_busy AS b ON b.scope = 'lane' AND b.k1 = d.device_id AND b.k2 = l.code
UNION ALL
SELECT d.device_id, 'idle', w.t1_ns - w.t0_ns - coalesce(b.union_ns, 0) AS lane_ns
FROM devices AS d
CROSS JOIN wall AS w
LEFT JOIN timeline_busy AS b ON b.scope = 'busy' AND b.k1 = d.device_id AND b.k2 = 1
ORDER BY device_id, lane;
