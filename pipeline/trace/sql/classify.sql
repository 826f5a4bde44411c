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
-- Strings are resolved once per distinct (short, demangled) id pair; kernel rows join the
-- verdicts on those integer ids, never on the (long) name strings.
CREATE OR REPLACE TEMP TABLE classified AS
WITH rules AS (
    SELECT i AS priority, $classes[i] AS class, $patterns[i] AS pattern
    FROM range(1, len($classes) + 1) AS t(i)
),
precision_rules AS (
    SELECT i AS priority, $precisions[i] AS precision, $precision_patterns[i] AS pattern
    FROM range(1, len($precisions) + 1) AS t(i)
),
keyed AS (
    SELECT a.*, CASE WHEN a.graph_id IS NULL THEN coalesce(a.name_id, -1) END AS name_key,
           coalesce(a.detail_id, -1) AS detail_key
    FROM attributed AS a
),
spelled AS (
    SELECT k.name_key, k.detail_key,
           coalesce(s.value, '[unnamed kernel]') AS name, coalesce(d.value, '') AS detail
    FROM (SELECT DISTINCT name_key, detail_key FROM keyed WHERE name_key IS NOT NULL) AS k
    LEFT JOIN raw_strings AS s ON s.id = k.name_key
    LEFT JOIN raw_strings AS d ON d.id = k.detail_key
),
names AS (
    SELECT DISTINCT name FROM spelled
),
matched AS (
    SELECT n.name, arg_min(r.class, r.priority) AS class
    FROM names AS n
    JOIN rules AS r ON regexp_matches(n.name, r.pattern)
    GROUP BY n.name
),
said AS (
    SELECT n.name_key, n.detail_key, arg_min(p.precision, p.priority) AS precision
    FROM spelled AS n
    JOIN precision_rules AS p ON regexp_matches(n.name || ' ' || n.detail, p.pattern)
    GROUP BY n.name_key, n.detail_key
),
judged AS (
    SELECT n.name_key, n.detail_key, n.name, coalesce(m.class, 'other') AS class,
           CASE WHEN list_contains($precision_classes, coalesce(m.class, 'other'))
                THEN coalesce(s.precision, 'unknown') END AS precision
    FROM spelled AS n
    LEFT JOIN matched AS m ON m.name = n.name
    LEFT JOIN said AS s ON s.name_key = n.name_key AND s.detail_key = n.detail_key
)
SELECT k.occurrence, k.global_pid, k.device_id,
       CASE WHEN k.graph_id IS NOT NULL THEN '[CUDA graph ' || k.graph_id || ']' ELSE j.name END AS name,
       CASE WHEN k.graph_id IS NOT NULL THEN 'cuda_graph' ELSE j.class END AS class, 'kernel' AS kind,
       k.start_ns, k.end_ns, j.precision
FROM keyed AS k
LEFT JOIN judged AS j ON j.name_key = k.name_key AND j.detail_key = k.detail_key
UNION ALL
SELECT occurrence, global_pid, device_id, name, 'memory', 'memory', start_ns, end_ns, CAST(NULL AS VARCHAR)
FROM attributed_memops;
