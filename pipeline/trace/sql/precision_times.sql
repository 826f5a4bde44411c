-- reads: name_times, kernel_names
-- creates: -
-- Time of the matrix kernels (the classes classify.sql gives a precision: gemm, attention,
-- convolution) per precision their names say, 'unknown' included, over the selected
-- occurrences: count, summed durations (GPU-time) and the $names names with the most time.
-- Rows are summed per name_id first (integers), then per precision and name (kernel_names).
WITH per_id AS (
    SELECT name_id, sum(kernel_count) AS kernel_count, sum(sum_ns) AS sum_ns
    FROM name_times
    GROUP BY name_id
),
per_name AS (
    SELECT n.precision, n.name, sum(p.kernel_count) AS kernel_count, sum(p.sum_ns) AS sum_ns
    FROM per_id AS p
    JOIN kernel_names AS n ON n.name_id = p.name_id
    WHERE n.precision IS NOT NULL
    GROUP BY n.precision, n.name
)
SELECT precision,
       CAST(sum(kernel_count) AS BIGINT) AS kernel_count,
       CAST(sum(sum_ns) AS BIGINT) AS sum_ns,
       list(name ORDER BY sum_ns DESC, name)[1:$names] AS top_names
FROM per_name
GROUP BY precision
ORDER BY sum_ns DESC, precision;
