-- reads: attributed, attributed_memops, raw_strings
-- creates: classified
-- Each attributed kernel gets the class of the first rule whose RE2 pattern matches its
-- name ($classes[i] / $patterns[i], tested in list order), else 'other'; attributed memory
-- copies and sets are class 'memory'. Names are matched once each, not once per kernel.
-- kind: 'kernel' or 'memory' (copies run on copy engines and stay out of overlap figures).
-- precision: for kernels of $precision_classes, the first precision whose pattern matches
-- the short name or the demangled one ($precisions[i] / $precision_patterns[i]; the demangled
-- name's template arguments may say the type: flash_fwd_kernel<...cutlass::bfloat16_t...>),
-- else 'unknown' (never guessed); NULL for every other class. Tested once per distinct pair.
-- A CUDA graph launch recorded as one row (attributed.graph_id set, SEMANTICS §4) has no
-- kernel name: it is '[CUDA graph <graphId>]', class 'cuda_graph', whatever the rules say.
CREATE OR REPLACE TEMP TABLE classified AS
WITH rules AS (
    SELECT i AS priority, $classes[i] AS class, $patterns[i] AS pattern
    FROM range(1, len($classes) + 1) AS t(i)
),
precision_rules AS (
    SELECT i AS priority, $precisions[i] AS precision, $precision_patterns[i] AS pattern
    FROM range(1, len($precisions) + 1) AS t(i)
),
named AS (
    SELECT a.*, CASE WHEN a.graph_id IS NOT NULL THEN '[CUDA graph ' || a.graph_id || ']'
                     ELSE coalesce(s.value, '[unnamed kernel]') END AS name,
           coalesce(d.value, '') AS detail
    FROM attributed AS a
    LEFT JOIN raw_strings AS s ON s.id = a.name_id
    LEFT JOIN raw_strings AS d ON d.id = a.detail_id
),
names AS (
    SELECT DISTINCT name FROM named WHERE graph_id IS NULL
),
matched AS (
    SELECT n.name, arg_min(r.class, r.priority) AS class
    FROM names AS n
    JOIN rules AS r ON regexp_matches(n.name, r.pattern)
    GROUP BY n.name
),
spelled AS (
    SELECT DISTINCT name, detail FROM named WHERE graph_id IS NULL
),
said AS (
    SELECT n.name, n.detail, arg_min(p.precision, p.priority) AS precision
    FROM spelled AS n
    JOIN precision_rules AS p ON regexp_matches(n.name || ' ' || n.detail, p.pattern)
    GROUP BY n.name, n.detail
),
judged AS (
    SELECT n.name, n.detail, coalesce(m.class, 'other') AS class,
           CASE WHEN list_contains($precision_classes, coalesce(m.class, 'other'))
                THEN coalesce(s.precision, 'unknown') END AS precision
    FROM spelled AS n
    LEFT JOIN matched AS m ON m.name = n.name
    LEFT JOIN said AS s ON s.name = n.name AND s.detail = n.detail
)
SELECT n.occurrence, n.global_pid, n.device_id, n.name,
       CASE WHEN n.graph_id IS NOT NULL THEN 'cuda_graph' ELSE j.class END AS class, 'kernel' AS kind,
       n.start_ns, n.end_ns, j.precision
FROM named AS n
LEFT JOIN judged AS j ON j.name = n.name AND j.detail = n.detail AND n.graph_id IS NULL
UNION ALL
SELECT occurrence, global_pid, device_id, name, 'memory', 'memory', start_ns, end_ns, CAST(NULL AS VARCHAR)
FROM attributed_memops;
