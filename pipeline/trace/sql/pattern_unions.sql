-- reads: classified, kernel_names
-- creates: pattern_unions
-- unions (pattern_unions): device = device_id
-- Attributed kernels whose name matches the RE2 pattern $pattern, unioned per device over all
-- selected occurrences (docs/figures.md §6), for pattern_times.sql; a missing device is -1. The pattern
-- is tested once per distinct name (kernel_names), not once per kernel.
SELECT coalesce(device_id, -1) AS device_id, start_ns, end_ns
FROM classified
WHERE name_id IN (SELECT name_id FROM kernel_names WHERE regexp_matches(name, $pattern));
