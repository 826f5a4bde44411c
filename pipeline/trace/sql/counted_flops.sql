-- reads: operator_work
-- creates: -
-- The counted FLOPs of the window's occurrences (issue #31; operator_work.sql) summed four ways, one
-- `level` per grouping:
--   'operator': per operator, recorded shapes, status and reason (the per-operator table; not-covered
--     leaves and the 'outside' row included): calls, FLOPs, elements moved, the kernels they launched
--     (kernel_ns) and the GEMM/attention part of those (class_ns);
--   'kind': counted leaves per kind (mm, bmm, attention, attention_backward);
--   'label': per named range (operator_ranges.sql's label, forward and backward together; NULL: none): the counted
--     FLOPs of its leaves, and the time of the part: every kernel launched where it holds (kernel_ns,
--     kernel_count; backward_ns the part launched inside backward nodes; class_ns its GEMM/attention part,
--     coverage_ns what counted leaves launched of it);
--   'total': FLOPs, and the GEMM/attention time split into what counted leaves launched (coverage_ns) and
--     all of it (class_ns: not-covered leaves and kernels launched by none included).
-- flops counts every query-key pair of attention; flops_causal_half halves attention's pairs (s²/2, as
-- Megatron-LM counts causal attention): the shapes carry no causal flag, the job's convention chooses
-- (model/counted.py). Rows in a fixed order, so reports are byte-identical.
WITH work AS (
    SELECT *, CASE WHEN kind LIKE 'attention%' THEN flops // 2 ELSE flops END AS flops_causal_half
    FROM operator_work
),
leaves AS (
    SELECT * FROM work WHERE status <> 'range'
),
operators AS (
    SELECT 'operator' AS level, op, shapes, kind, status, reason, CAST(NULL AS VARCHAR) AS label,
           sum(calls) AS calls, sum(flops) AS flops, sum(flops_causal_half) AS flops_causal_half,
           sum(elements) AS elements, sum(kernel_count) AS kernel_count, sum(kernel_ns) AS kernel_ns,
           sum(gemm_ns) FILTER (WHERE status = 'counted') AS coverage_ns, sum(gemm_ns) AS class_ns,
           count(DISTINCT occurrence) AS occurrences, CAST(NULL AS HUGEINT) AS backward_ns
    FROM leaves
    GROUP BY op, shapes, kind, status, reason
),
kinds AS (
    SELECT 'kind', NULL, NULL, kind, NULL, NULL, NULL, sum(calls), sum(flops), sum(flops_causal_half),
           sum(elements), sum(kernel_count), sum(kernel_ns), sum(gemm_ns), sum(gemm_ns), count(DISTINCT occurrence),
           NULL
    FROM leaves
    WHERE status = 'counted'
    GROUP BY kind
),
labels AS (
    SELECT 'label', NULL, NULL, NULL, NULL, NULL, label,
           sum(calls) FILTER (WHERE status = 'counted'), sum(flops), sum(flops_causal_half), sum(elements),
           sum(kernel_count) FILTER (WHERE status = 'range'), sum(kernel_ns) FILTER (WHERE status = 'range'),
           sum(gemm_ns) FILTER (WHERE status = 'counted'), sum(gemm_ns) FILTER (WHERE status = 'range'),
           count(DISTINCT occurrence), sum(kernel_ns) FILTER (WHERE status = 'range' AND pass = 'backward')
    FROM work
    GROUP BY label
),
total AS (
    SELECT 'total', NULL, NULL, NULL, NULL, NULL, NULL, sum(calls), sum(flops), sum(flops_causal_half),
           sum(elements), sum(kernel_count), sum(kernel_ns),
           sum(gemm_ns) FILTER (WHERE status = 'counted'), sum(gemm_ns), count(DISTINCT occurrence), NULL
    FROM leaves
)
SELECT level, op, shapes, kind, status, reason, label, CAST(calls AS BIGINT) AS calls, flops, flops_causal_half,
       elements, CAST(kernel_count AS BIGINT) AS kernel_count, CAST(kernel_ns AS BIGINT) AS kernel_ns,
       CAST(coverage_ns AS BIGINT) AS coverage_ns, CAST(class_ns AS BIGINT) AS class_ns, occurrences,
       CAST(backward_ns AS BIGINT) AS backward_ns
FROM (SELECT * FROM operators UNION ALL SELECT * FROM kinds UNION ALL SELECT * FROM labels
      UNION ALL SELECT * FROM total)
ORDER BY level, flops DESC NULLS LAST, kernel_ns DESC, op NULLS LAST, shapes NULLS LAST, kind, label, status, reason
