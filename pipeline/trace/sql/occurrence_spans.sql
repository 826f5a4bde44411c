-- reads: occurrence_times
-- creates: span_unions
-- unions (span_unions): span = kind
-- The time the selected occurrences span (docs/figures.md §6), for occurrence_totals.sql: kind 0 is
-- each occurrence's envelope [start, start + wall], kind 1 its longest range.
SELECT 0 AS kind, start_ns, start_ns + wall_ns AS end_ns FROM occurrence_times
UNION ALL
SELECT 1, cpu_start_ns, cpu_start_ns + cpu_range_ns FROM occurrence_times;
