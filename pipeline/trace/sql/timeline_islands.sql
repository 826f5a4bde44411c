-- reads: classified, kernel_names
-- creates: timeline_step, timeline_islands
-- islands (timeline_islands): lane = device_id, lane
-- The activity of occurrence $occurrence on the devices $devices by lane (timeline_step): lane 0
-- memory operations, 1 kernels of class $comm_class, 2 other kernels, 3 any kernel (busy; its gaps
-- are the idle time). Then joined into islands per device and lane by trace/unions.py (one sorted
-- pass, not two SQL window functions over every kernel of the step): each interval is lengthened
-- by $min_gap_ns, so intervals less than that apart join (timeline.sql takes it off the island's
-- end again). timeline_busy.sql takes the lanes' exact time from timeline_step, unjoined.
CREATE OR REPLACE TEMP TABLE timeline_step AS
WITH step AS (
    SELECT c.device_id, c.start_ns, c.end_ns, n.kind, n.class
    FROM classified AS c
    JOIN kernel_names AS n ON n.name_id = c.name_id
    WHERE c.occurrence = $occurrence AND list_contains($devices, c.device_id)
)
SELECT device_id, CASE WHEN kind = 'memory' THEN 0 WHEN class = $comm_class THEN 1 ELSE 2 END AS lane,
       start_ns, end_ns
FROM step
UNION ALL
SELECT device_id, 3, start_ns, end_ns
FROM step
WHERE kind = 'kernel';

SELECT device_id, lane, start_ns, end_ns + $min_gap_ns AS end_ns
FROM timeline_step;
