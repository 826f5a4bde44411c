-- reads: region_ranges
-- creates: -
-- The first selected range whose thread id is negative (trace_warnings.refuse_negative_ranges names it in its
-- refusal): looked up only once the per-process counts (region_counts.sql) showed one, so the check adds
-- no query to a sound trace. A thread id packs host, pid and tid (docs/figures.md §2) and is never negative.
SELECT start_ns, global_tid
FROM region_ranges
WHERE global_tid < 0
ORDER BY start_ns, global_tid
LIMIT 1;
