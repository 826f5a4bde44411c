-- reads: span_unions, attributed_unions
-- creates: -
-- Totals over the selected occurrences (SEMANTICS §6): unions, not sums, so time in which
-- occurrences overlap (the CPU ran ahead of the GPU) counts once.
--   wall_ns       union of the occurrence envelopes; wall_sum_ns their sum
--   cpu_range_ns  union of each occurrence's longest range (occurrence_times.cpu_start_ns)
--   kernel_*      all attributed kernels of the selected occurrences at once (attributed_unions.sql)
--   devices       per device: union and count over all selected occurrences
SELECT
    coalesce((SELECT union_ns FROM span_unions WHERE k1 = 0), 0) AS wall_ns,
    coalesce((SELECT sum_ns FROM span_unions WHERE k1 = 0), 0) AS wall_sum_ns,
    coalesce((SELECT union_ns FROM span_unions WHERE k1 = 1), 0) AS cpu_range_ns,
    coalesce((SELECT sum_ns FROM span_unions WHERE k1 = 1), 0) AS cpu_range_sum_ns,
    coalesce((SELECT union_ns FROM attributed_unions WHERE scope = 'total'), 0) AS kernel_union_ns,
    coalesce((SELECT sum_ns FROM attributed_unions WHERE scope = 'total'), 0) AS kernel_sum_ns,
    coalesce((SELECT interval_count FROM attributed_unions WHERE scope = 'total'), 0) AS kernel_count,
    (SELECT coalesce(list({'device_id': k1, 'union_ns': union_ns, 'kernel_count': interval_count}
                          ORDER BY k1), [])
     FROM attributed_unions WHERE scope = 'total_device' AND k1 <> -1) AS devices;
