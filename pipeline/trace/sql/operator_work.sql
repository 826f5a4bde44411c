-- reads: operator_ranges, label_spans, attributed, name_classes
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
-- latest leaf started at or before the launch on that thread is the only candidate; so for a backward node and
-- a label's segment. Each of the three is looked up as the span from a row's start to the next row's start on
-- its thread (the latest started before the launch holds it there), cut at the row's end: spans that do not
-- overlap, listed under their time buckets (macros.sql time_buckets), each kernel joined by equality on its
-- launch's bucket (issue #33: three ASOF joins each sorted all the window's kernels, 270 MB at 0.8 M; hash
-- joins stream them). Kernels are then grouped once (grouped) for the three kinds of rows.
-- Its launch's start and thread are the ones attribute_launch.sql kept with it (the launch table is not
-- read again); under window attribution there are none, and no kernel is placed. A kernel's class is its
-- name's, as classify.sql gave it (kernel_names: the class depends on the name alone), looked up by the
-- short-name id in name_classes (classify.sql); gemm_ns sums the
-- kernels of $coverage_classes. $place false (measure.build_window: no operator range and no named range
-- but the region's) places nothing: the table is then empty.
CREATE OR REPLACE TEMP TABLE operator_work AS
WITH kernels AS (
    SELECT a.occurrence, a.launch_tid AS global_tid, a.launch_ns, a.end_ns - a.start_ns AS dur_ns,
           list_contains($coverage_classes, c.class) AS coverage_class
    FROM attributed AS a
    LEFT JOIN name_classes AS c ON c.name_key = coalesce(a.name_id, -1)
    WHERE $place AND a.graph_id IS NULL
),
op_spans AS (
    SELECT occurrence, global_tid, op_key, start_ns,
           least(end_ns + 1, coalesce(lead(start_ns) OVER (PARTITION BY occurrence, global_tid ORDER BY start_ns),
                                      end_ns + 1)) AS end_ns
    FROM operator_ranges
),
node_spans AS (
    SELECT occurrence, global_tid, node, label, start_ns,
           least(end_ns + 1, coalesce(lead(start_ns) OVER (PARTITION BY occurrence, global_tid ORDER BY start_ns),
                                      end_ns + 1)) AS end_ns
    FROM label_spans
    WHERE node
),
segment_spans AS (
    SELECT occurrence, global_tid, label, start_ns,
           least(end_ns, coalesce(lead(start_ns) OVER (PARTITION BY occurrence, global_tid ORDER BY start_ns),
                                  end_ns)) AS end_ns
    FROM label_spans
    WHERE NOT node
),
ops AS (SELECT * FROM time_buckets(op_spans)),
nodes AS (SELECT * FROM time_buckets(node_spans)),
segments AS (SELECT * FROM time_buckets(segment_spans)),
labelled AS (
    SELECT k.occurrence, k.dur_ns, k.coverage_class, k.launch_ns IS NOT NULL AS launched, o.op_key,
           CASE WHEN n.node THEN 'backward' ELSE 'forward' END AS pass,
           CASE WHEN n.node AND n.label IS NOT NULL THEN n.label ELSE g.label END AS label
    FROM kernels AS k
    LEFT JOIN ops AS o
      ON o.occurrence = k.occurrence AND o.global_tid = k.global_tid
     AND o.bucket = k.launch_ns // (SELECT any_value(width_ns) FROM ops)
     AND k.launch_ns >= o.start_ns AND k.launch_ns < o.end_ns
    LEFT JOIN nodes AS n
      ON n.occurrence = k.occurrence AND n.global_tid = k.global_tid
     AND n.bucket = k.launch_ns // (SELECT any_value(width_ns) FROM nodes)
     AND k.launch_ns >= n.start_ns AND k.launch_ns < n.end_ns
    LEFT JOIN segments AS g
      ON g.occurrence = k.occurrence AND g.global_tid = k.global_tid
     AND g.bucket = k.launch_ns // (SELECT any_value(width_ns) FROM segments)
     AND k.launch_ns >= g.start_ns AND k.launch_ns < g.end_ns
),
grouped AS MATERIALIZED (
    SELECT occurrence, op_key, coverage_class, launched, pass, label, count(*) AS kernel_count, sum(dur_ns) AS kernel_ns
    FROM labelled
    GROUP BY ALL
),
per_op AS (
    SELECT op_key, sum(kernel_count) AS kernel_count, sum(kernel_ns) AS kernel_ns,
           sum(kernel_ns) FILTER (WHERE coverage_class) AS gemm_ns
    FROM grouped
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
SELECT occurrence, NULL, NULL, NULL, NULL, NULL, 'outside', NULL, 0, NULL, NULL, CAST(sum(kernel_count) AS BIGINT),
       CAST(sum(kernel_ns) AS BIGINT), CAST(sum(kernel_ns) AS BIGINT)
FROM grouped
WHERE op_key IS NULL AND coverage_class
GROUP BY occurrence
UNION ALL
SELECT occurrence, NULL, NULL, NULL, label, pass, 'range', NULL, 0, NULL, NULL, CAST(sum(kernel_count) AS BIGINT),
       CAST(sum(kernel_ns) AS BIGINT), CAST(coalesce(sum(kernel_ns) FILTER (WHERE coverage_class), 0) AS BIGINT)
FROM grouped
WHERE launched
GROUP BY occurrence, label, pass;

DROP TABLE operator_ranges;
DROP TABLE label_spans
