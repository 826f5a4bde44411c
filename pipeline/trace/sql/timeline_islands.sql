-- reads: classified, kernel_names
-- creates: timeline_step, timeline_islands
-- islands (timeline_islands): lane = device_id, lane; busy = device_id, kernel
-- The activity of occurrence $occurrence on the devices $devices (timeline_step), each row once: lane
-- 0 memory operations, 1 kernels of class $comm_class, 2 other kernels; kernel = 0 for memory
-- operations, 1 for kernels. Joined into islands by trace/unions.py (one sorted pass, not two SQL
-- window functions over every kernel of the step) per device and lane (scope lane) and per device
-- over kernels or memory operations (scope busy: with kernel = 1, any kernel running; its gaps are
-- the idle time). Each interval is lengthened by $min_gap_ns, so intervals less than that apart
-- join (timeline.sql takes it off the island's end again). timeline_busy.sql times the same rows
-- exactly, unjoined.
CREATE OR REPLACE TEMP TABLE timeline_step AS
SELECT c.device_id,
       CASE WHEN n.kind = 'memory' THEN 0 WHEN n.class = $comm_class THEN 1 ELSE 2 END AS lane,
       CAST(n.kind = 'kernel' AS UTINYINT) AS kernel, c.start_ns, c.end_ns
FROM classified AS c
JOIN kernel_names AS n ON n.name_id = c.name_id
WHERE c.occurrence = $occurrence AND list_contains($devices, c.device_id);

SELECT device_id, lane, kernel, start_ns, end_ns + $min_gap_ns AS end_ns
FROM timeline_step;
