-- reads: classified
-- creates: pattern_unions
-- unions (pattern_unions): device = device_id
-- Attributed kernels whose name matches the RE2 pattern $pattern, unioned per device over all
-- selected occurrences (SEMANTICS §6), for pattern_times.sql; a missing device is -1.
SELECT coalesce(device_id, -1) AS device_id, start_ns, end_ns
FROM classified
WHERE regexp_matches(name, $pattern);
