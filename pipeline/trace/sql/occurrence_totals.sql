-- reads: occurrence_times, attributed_unions, interval_union
-- creates: -
-- Totals over the selected occurrences (SEMANTICS §6): unions, not sums, so time in which
-- occurrences overlap (the CPU ran ahead of the GPU) counts once.
--   wall_ns       union of the occurrence envelopes [start, start + wall]; wall_sum_ns their sum
--   cpu_range_ns  union of each occurrence's longest range (occurrence_times.cpu_start_ns)
--   kernel_*      all attributed kernels of the selected occurrences at once (kernel_union.sql)
--   devices       per device: union and count over all selected occurrences
WITH spans AS (
    SELECT 'wall' AS scope, CAST(NULL AS BIGINT) AS k1, CAST(NULL AS BIGINT) AS k2,
           start_ns, start_ns + wall_ns AS end_ns
    FROM occurrence_times
    UNION ALL
    SELECT 'cpu', NULL, NULL, cpu_start_ns, cpu_start_ns + cpu_range_ns FROM occurrence_times
),
u AS (SELECT * FROM interval_union('spans'))
SELECT
    coalesce((SELECT union_ns FROM u WHERE scope = 'wall'), 0) AS wall_ns,
    coalesce((SELECT sum_ns FROM u WHERE scope = 'wall'), 0) AS wall_sum_ns,
    coalesce((SELECT union_ns FROM u WHERE scope = 'cpu'), 0) AS cpu_range_ns,
    coalesce((SELECT sum_ns FROM u WHERE scope = 'cpu'), 0) AS cpu_range_sum_ns,
    coalesce((SELECT union_ns FROM attributed_unions WHERE scope = 'total'), 0) AS kernel_union_ns,
    coalesce((SELECT sum_ns FROM attributed_unions WHERE scope = 'total'), 0) AS kernel_sum_ns,
    coalesce((SELECT interval_count FROM attributed_unions WHERE scope = 'total'), 0) AS kernel_count,
    (SELECT coalesce(list({'device_id': k2, 'union_ns': union_ns, 'kernel_count': interval_count}
                          ORDER BY k2), [])
     FROM attributed_unions WHERE scope = 'total_device') AS devices;
