-- reads: timeline_step, selected_ranges
-- creates: timeline_busy
-- unions (timeline_busy): lane = device_id, lane; busy = device_id, kernel
-- The exact time each lane of the timeline was active, and any kernel (scope busy, kernel = 1), in
-- timeline_islands.sql's rows of occurrence $occurrence, no gap joined: the drawn islands join gaps
-- under one pixel, so their lengths overstate it. Clipped to the step's start (the earliest range
-- start, as for the wall: a kernel attributed by overlap may start before it); no kernel of the
-- step ends after the wall's end.
WITH t0 AS (
    SELECT min(start_ns) AS t0_ns FROM selected_ranges WHERE occurrence = $occurrence
)
SELECT s.device_id, s.lane, s.kernel, greatest(s.start_ns, t0.t0_ns) AS start_ns, s.end_ns
FROM timeline_step AS s, t0
WHERE s.end_ns > t0.t0_ns;
