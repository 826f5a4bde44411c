-- reads: nested_ranges
-- creates: -
-- Per process, the matching ranges folded into an outer one because they were nested
-- (region_ranges.sql), with an example name, for the `nested_occurrences` warning.
SELECT pid, count(*) AS nested, min(name) AS example
FROM nested_ranges
GROUP BY pid, global_pid
ORDER BY pid, global_pid;
