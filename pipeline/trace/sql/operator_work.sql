-- reads: operator_ranges, label_spans, attributed, kernel_names, raw_strings
-- creates: operator_work
-- The window's one table of counted FLOPs (issue #31), kept with it (kept_window.py, window_share.sql,
-- rank_collect.sql): operator_ranges.sql's leaves by occurrence, operator, shapes, label, pass and status,
-- with their calls, FLOPs, elements moved and the attributed kernels launched inside them, plus one row per
-- occurrence (status 'outside', no operator) with the GEMM- and attention-class kernels launched inside
-- none, and rows of status 'range' (no operator): per occurrence, label and pass, every kernel launched
-- where that label holds (label_spans, operator_ranges.sql; NULL: where none does), for the time of each
-- part of the step.
-- A kernel belongs to the leaf on its launch's thread whose range holds the launch call's start
-- (docs/figures.md §4: what a range launched, not what ran beside it). Leaves never nest in each other, so the
-- latest leaf started at or before the launch on that thread (an ASOF join) is the only candidate.
-- Its launch's start and thread are the ones attribute_launch.sql kept with it (the launch table is not
-- read again); under window attribution there are none, and no kernel is placed. A kernel's class is its
-- name's, as classify.sql gave it (kernel_names: the class depends on the name alone); gemm_ns sums the
-- kernels of $coverage_classes. $place false (measure.build_window: no operator range and no named range
-- but the region's) places nothing: the table is then empty.
CREATE OR REPLACE TEMP TABLE operator_work AS
WITH classes AS (
    SELECT DISTINCT name, class FROM kernel_names WHERE kind = 'kernel'
),
kernels AS (
    SELECT a.occurrence, a.launch_tid AS global_tid, a.launch_ns, a.end_ns - a.start_ns AS dur_ns,
           list_contains($coverage_classes, c.class) AS coverage_class
    FROM attributed AS a
    LEFT JOIN raw_strings AS s ON s.id = a.name_id
    LEFT JOIN classes AS c ON c.name = coalesce(s.value, '[unnamed kernel]')
    WHERE $place AND a.graph_id IS NULL
),
placed AS (
    SELECT k.occurrence, k.global_tid, k.launch_ns, k.dur_ns, k.coverage_class,
           CASE WHEN k.launch_ns <= o.end_ns THEN o.op_key END AS op_key
    FROM kernels AS k
    ASOF LEFT JOIN operator_ranges AS o
      ON o.occurrence = k.occurrence AND o.global_tid = k.global_tid AND k.launch_ns >= o.start_ns
),
in_node AS (
    SELECT p.*, CASE WHEN p.launch_ns <= n.end_ns THEN n.node END AS in_node, n.label AS node_label
    FROM placed AS p
    ASOF LEFT JOIN (SELECT * FROM label_spans WHERE node) AS n
      ON n.occurrence = p.occurrence AND n.global_tid = p.global_tid AND p.launch_ns >= n.start_ns
),
labelled AS (
    SELECT p.occurrence, p.dur_ns, p.coverage_class, p.launch_ns IS NOT NULL AS launched,
           CASE WHEN p.in_node THEN 'backward' ELSE 'forward' END AS pass,
           CASE WHEN p.in_node AND p.node_label IS NOT NULL THEN p.node_label
                WHEN p.launch_ns < g.end_ns THEN g.label END AS label
    FROM in_node AS p
    ASOF LEFT JOIN (SELECT * FROM label_spans WHERE NOT node) AS g
      ON g.occurrence = p.occurrence AND g.global_tid = p.global_tid AND p.launch_ns >= g.start_ns
),
per_op AS (
    SELECT op_key, count(*) AS kernel_count, sum(dur_ns) AS kernel_ns,
           sum(dur_ns) FILTER (WHERE coverage_class) AS gemm_ns
    FROM placed
    WHERE op_key IS NOT NULL
    GROUP BY op_key
)
SELECT o.occurrence, o.op, o.shapes, o.kind, o.label, o.pass, o.status, o.reason,
       count(*) AS calls, CAST(sum(o.flops) AS BIGINT) AS flops, CAST(sum(o.elements) AS BIGINT) AS elements,
       CAST(coalesce(sum(p.kernel_count), 0) AS BIGINT) AS kernel_count,
       CAST(coalesce(sum(p.kernel_ns), 0) AS BIGINT) AS kernel_ns,
       CAST(coalesce(sum(p.gemm_ns), 0) AS BIGINT) AS gemm_ns
FROM operator_ranges AS o
LEFT JOIN per_op AS p USING (op_key)
GROUP BY ALL
UNION ALL
SELECT occurrence, NULL, NULL, NULL, NULL, NULL, 'outside', NULL, 0, NULL, NULL, CAST(count(*) AS BIGINT),
       CAST(sum(dur_ns) AS BIGINT), CAST(sum(dur_ns) AS BIGINT)
FROM placed
WHERE op_key IS NULL AND coverage_class
GROUP BY occurrence
UNION ALL
SELECT occurrence, NULL, NULL, NULL, label, pass, 'range', NULL, 0, NULL, NULL, CAST(count(*) AS BIGINT),
       CAST(sum(dur_ns) AS BIGINT), CAST(coalesce(sum(dur_ns) FILTER (WHERE coverage_class), 0) AS BIGINT)
FROM labelled
WHERE launched
GROUP BY occurrence, label, pass;

DROP TABLE operator_ranges;
DROP TABLE label_spans
