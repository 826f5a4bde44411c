-- reads: timeline_busy, occurrence_times
-- creates: -
-- Per device in $devices, how long each lane of the timeline of occurrence $occurrence was active
-- inside the step's wall (timeline_busy.sql: exact, unlike the drawn islands), and idle = the wall
-- (occurrence_times.sql) less the union of all the device's kernels (scope busy), as timeline.sql
-- draws it. A device with no kernel idles the whole step.
WITH devices AS (
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
SELECT d.device_id, 'idle', o.wall_ns - coalesce(b.union_ns, 0) AS lane_ns
FROM devices AS d
JOIN occurrence_times AS o ON o.occurrence = $occurrence
LEFT JOIN timeline_busy AS b ON b.scope = 'busy' AND b.k1 = d.device_id AND b.k2 = 1
ORDER BY device_id, lane;
