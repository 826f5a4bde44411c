-- reads: span_unions, window_unions
-- creates: -
-- Totals over the selected occurrences (docs/figures.md §6): unions, not sums, so time in which
-- occurrences overlap (the CPU ran ahead of the GPU) counts once.
--   wall_ns       union of the occurrence envelopes; wall_sum_ns their sum
--   cpu_range_ns  union of each occurrence's longest range (occurrence_times.cpu_start_ns)
--   kernel_*      all attributed kernels of the selected occurrences at once (window_unions.sql)
--   devices       per device: union and count over all selected occurrences
-- One pass over each small table with FILTERed aggregates (each has one row per key here):
-- eight scalar subqueries cost 5 ms per job, this 1 ms.
WITH s AS (
    SELECT coalesce(any_value(union_ns) FILTER (WHERE k1 = 0), 0) AS wall_ns,
           coalesce(any_value(sum_ns) FILTER (WHERE k1 = 0), 0) AS wall_sum_ns,
           coalesce(any_value(union_ns) FILTER (WHERE k1 = 1), 0) AS cpu_range_ns,
           coalesce(any_value(sum_ns) FILTER (WHERE k1 = 1), 0) AS cpu_range_sum_ns
    FROM span_unions
),
w AS (
    SELECT coalesce(any_value(union_ns) FILTER (WHERE scope = 'total'), 0) AS kernel_union_ns,
           coalesce(any_value(sum_ns) FILTER (WHERE scope = 'total'), 0) AS kernel_sum_ns,
           coalesce(any_value(interval_count) FILTER (WHERE scope = 'total'), 0) AS kernel_count,
           coalesce(list({'device_id': k2, 'union_ns': union_ns, 'kernel_count': interval_count} ORDER BY k2)
                    FILTER (WHERE scope = 'total_device' AND k2 <> -1), []) AS devices
    FROM window_unions
    WHERE scope IN ('total', 'total_device') AND k1 = 1
)
SELECT s.*, w.* FROM s, w;
