-- reads: timeline_step, occurrence_times
-- creates: timeline_busy
-- unions (timeline_busy): lane = device_id, lane; busy = device_id, kernel
-- The exact time each lane of the timeline was active, and any kernel (scope busy, kernel = 1), in
-- timeline_islands.sql's rows of occurrence $occurrence, no gap joined: the drawn islands join gaps
-- under one pixel, so their lengths overstate it. Clipped to the step's wall (occurrence_times.sql:
-- from the earliest range start; a kernel attributed by overlap may start before it, and a memory
-- operation may end after the last kernel), so no lane is longer than the wall.
WITH wall AS (
    SELECT start_ns AS t0_ns, start_ns + wall_ns AS t1_ns FROM occurrence_times WHERE occurrence = $occurrence
)
SELECT s.device_id, s.lane, s.kernel, greatest(s.start_ns, w.t0_ns) AS start_ns, least(s.end_ns, w.t1_ns) AS end_ns
FROM timeline_step AS s, wall AS w
WHERE s.end_ns > w.t0_ns AND s.start_ns < w.t1_ns;
