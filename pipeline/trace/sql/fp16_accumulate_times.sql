-- reads: name_times, kernel_names
-- creates: -
-- Time of the fp16 matrix kernels whose names say they also ACCUMULATE in FP16 ($patterns:
-- configs/kernel_classes.yaml `fp16_accumulate`), over the selected occurrences: count, summed
-- durations (GPU-time) and the $names names with the most time. GeForce cards run such kernels at
-- twice the catalog's fp16 peak (FP32 accumulate); analysis/precision.py warns. One row, zeros when
-- no kernel matches. Rows are summed per name_id first (integers), then per name (kernel_names).
WITH patterns AS (
    SELECT unnest($patterns) AS pattern
),
per_id AS (
    SELECT name_id, sum(kernel_count) AS kernel_count, sum(sum_ns) AS sum_ns
    FROM name_times
    GROUP BY name_id
),
per_name AS (
    SELECT n.name, sum(p.kernel_count) AS kernel_count, sum(p.sum_ns) AS sum_ns
    FROM per_id AS p
    JOIN kernel_names AS n ON n.name_id = p.name_id
    WHERE n.precision = 'fp16'
      AND EXISTS (SELECT 1 FROM patterns AS r WHERE regexp_matches(n.name, r.pattern))
    GROUP BY n.name
)
SELECT CAST(coalesce(sum(kernel_count), 0) AS BIGINT) AS kernel_count,
       CAST(coalesce(sum(sum_ns), 0) AS BIGINT) AS sum_ns,
       coalesce(list(name ORDER BY sum_ns DESC, name)[1:$names], []) AS top_names
FROM per_name;
