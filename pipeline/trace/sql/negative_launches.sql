-- reads: candidate_launches, unlaunched
-- creates: -
-- The first launch row with a negative thread id (docs/figures.md §2: an id packs host, pid and tid and is
-- never negative) whose correlationId is that of a kernel unattributed.sql found with no launch row in
-- its process: its kernel was launched, by a row whose process cannot be known. Reads only the few launch
-- rows unattributed.sql kept, and only when it found such kernels (measure.build_window).
SELECT l.start_ns, l.global_tid, l.correlation_id
FROM candidate_launches AS l
WHERE l.global_tid < 0
  AND l.correlation_id IN (SELECT correlation_id FROM unlaunched)
ORDER BY l.start_ns, l.global_tid
LIMIT 1;
