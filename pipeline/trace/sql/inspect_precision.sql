-- reads: kernels, raw_strings
-- creates: -
-- Kernel time by the precision kernel names announce (cuBLAS/CUTLASS/PyTorch spell it in the name:
-- `..._bf16_...`, `c10::BFloat16`, `e4m3`, `tf32`), for `mfu init` to suggest hardware.precision.
-- Names are tested once per distinct name, not once per kernel. share: of all kernel time.
WITH per_name AS (
    SELECT name_id, sum(end_ns - start_ns) AS kernel_ns, count(*) AS kernels FROM kernels GROUP BY name_id
),
tagged AS (
    SELECT p.kernel_ns, p.kernels,
           CASE WHEN regexp_matches(s.value, '(?i)(e4m3|e5m2|fp8)') THEN 'fp8'
                WHEN regexp_matches(s.value, '(?i)(bf16|bfloat16)') THEN 'bf16'
                WHEN regexp_matches(s.value, '(?i)(fp16|f16|half)') THEN 'fp16'
                WHEN regexp_matches(s.value, '(?i)tf32') THEN 'tf32'
           END AS precision
    FROM per_name AS p
    LEFT JOIN raw_strings AS s ON s.id = p.name_id
)
SELECT precision, sum(kernel_ns) AS kernel_ns, sum(kernels) AS kernels,
       sum(kernel_ns) / (SELECT nullif(sum(kernel_ns), 0) FROM tagged) AS share
FROM tagged
WHERE precision IS NOT NULL
GROUP BY precision
ORDER BY kernel_ns DESC, precision;
