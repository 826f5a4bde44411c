-- reads: unclosed_ranges
-- creates: -
-- Per process, the matching ranges never closed (region_ranges.sql), with the first one's start
-- and name, for the `unclosed_ranges` warning: they are not counted as occurrences.
SELECT pid, count(*) AS unclosed, min(start_ns) AS first_start_ns, arg_min(name, start_ns) AS example
FROM unclosed_ranges
GROUP BY pid, global_pid
ORDER BY pid, global_pid;
