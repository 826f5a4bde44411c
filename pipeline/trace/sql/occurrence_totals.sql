-- reads: span_unions, window_unions
-- creates: -
-- Totals over the selected occurrences (SEMANTICS §6): unions, not sums, so time in which
-- occurrences overlap (the CPU ran ahead of the GPU) counts once.
--   wall_ns       union of the occurrence envelopes; wall_sum_ns their sum
--   cpu_range_ns  union of each occurrence's longest range (occurrence_times.cpu_start_ns)
--   kernel_*      all attributed kernels of the selected occurrences at once (window_unions.sql)
--   devices       per device: union and count over all selected occurrences
SELECT
    coalesce((SELECT union_ns FROM span_unions WHERE k1 = 0), 0) AS wall_ns,
    coalesce((SELECT sum_ns FROM span_unions WHERE k1 = 0), 0) AS wall_sum_ns,
    coalesce((SELECT union_ns FROM span_unions WHERE k1 = 1), 0) AS cpu_range_ns,
    coalesce((SELECT sum_ns FROM span_unions WHERE k1 = 1), 0) AS cpu_range_sum_ns,
    coalesce((SELECT union_ns FROM window_unions WHERE scope = 'total' AND k1 = 1), 0) AS kernel_union_ns,
    coalesce((SELECT sum_ns FROM window_unions WHERE scope = 'total' AND k1 = 1), 0) AS kernel_sum_ns,
    coalesce((SELECT interval_count FROM window_unions WHERE scope = 'total' AND k1 = 1), 0) AS kernel_count,
    (SELECT coalesce(list({'device_id': k2, 'union_ns': union_ns, 'kernel_count': interval_count}
                          ORDER BY k2), [])
     FROM window_unions WHERE scope = 'total_device' AND k1 = 1 AND k2 <> -1) AS devices;
