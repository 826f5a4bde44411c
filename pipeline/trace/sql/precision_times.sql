-- reads: classified
-- creates: -
-- Time of the matrix kernels (the classes classify.sql gives a precision: gemm, attention,
-- convolution) per precision their names say, 'unknown' included, over the selected
-- occurrences: count, summed durations (GPU-time) and the $names names with the most time.
WITH per_name AS (
    SELECT precision, name, count(*) AS kernel_count, sum(end_ns - start_ns) AS sum_ns
    FROM classified
    WHERE precision IS NOT NULL
    GROUP BY precision, name
)
SELECT precision,
       CAST(sum(kernel_count) AS BIGINT) AS kernel_count,
       CAST(sum(sum_ns) AS BIGINT) AS sum_ns,
       list(name ORDER BY sum_ns DESC, name)[1:$names] AS top_names
FROM per_name
GROUP BY precision
ORDER BY sum_ns DESC, precision;
