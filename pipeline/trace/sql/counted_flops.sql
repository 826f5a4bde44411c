-- reads: operator_work
-- creates: -
-- The counted FLOPs of the window's occurrences (issue #31; operator_work.sql), summed four ways, one
-- `level` per grouping: 'operator' (operator and recorded shapes, status and reason: the per-operator
-- table, the not-covered ones included), 'kind' (mm, bmm, attention, attention_backward), 'label' (the
-- innermost named range, forward and backward together) and 'total'. Only counted leaves add FLOPs;
-- kernel_ns is what the leaves launched, gemm_ns the GEMM- and attention-class part of it, and
-- coverage_ns / class_ns split that class time into what counted leaves launched and all of it (the
-- not-covered leaves' and the kernels no leaf launched included). $causal_half: halve attention's
-- query-key pairs, as the job's convention counts causal attention (Megatron-LM: s²/2); the shapes
-- carry no causal flag (operator_ranges.sql). Rows in a fixed order, so reports are byte-identical.
WITH work AS (
    SELECT *, CASE WHEN $causal_half AND kind LIKE 'attention%' THEN flops // 2 ELSE flops END AS counted_flops
    FROM operator_work
),
grouped AS (
    SELECT CASE WHEN GROUPING(op) = 0 THEN 'operator' WHEN GROUPING(kind) = 0 THEN 'kind'
                WHEN GROUPING(label) = 0 THEN 'label' ELSE 'total' END AS level,
           op, shapes, kind, status, reason, label,
           CAST(sum(calls) AS BIGINT) AS calls,
           sum(counted_flops) AS flops,
           CAST(sum(kernel_count) AS BIGINT) AS kernel_count,
           CAST(sum(kernel_ns) AS BIGINT) AS kernel_ns,
           CAST(sum(gemm_ns) FILTER (WHERE status = 'counted') AS BIGINT) AS coverage_ns,
           CAST(sum(gemm_ns) AS BIGINT) AS class_ns,
           count(DISTINCT occurrence) AS occurrences
    FROM work
    GROUP BY GROUPING SETS ((op, shapes, kind, status, reason), (kind), (label), ())
)
SELECT *
FROM grouped
WHERE level IN ('operator', 'total') OR (level = 'kind' AND kind IS NOT NULL AND flops IS NOT NULL)
   OR (level = 'label' AND flops IS NOT NULL)
ORDER BY level, flops DESC NULLS LAST, op, shapes, kind, label, status, reason
