-- reads: attributed, attributed_memops, raw_strings, kernel_copies, memop_copies
-- creates: kernel_names, classified, name_classes
-- kernel_copies and memop_copies are read for the order only: duplicate_kernels.sql and duplicate_memops.sql
-- delete the copies from `attributed` and `attributed_memops` first (they are absent where no window is
-- built: mfu inspect). Each attributed kernel gets the class of the first rule whose RE2 pattern matches its
-- name ($classes[i] / $patterns[i], tested in list order), else 'other'; a short name matching one of
-- $generic_names (CUTLASS's `Kernel2`, which says nothing) is judged by its demangled name instead, when
-- the export has one (the name printed stays the short one); attributed memory
-- copies and sets are class 'memory'. Names are matched once each, not once per kernel.
-- kind: 'kernel' or 'memory' (copies run on copy engines and stay out of overlap figures).
-- precision: for kernels of $precision_classes, the first precision whose pattern matches
-- the short name or the demangled one ($precisions[i] / $precision_patterns[i]; the demangled
-- name's template arguments may say the type: flash_fwd_kernel<...cutlass::bfloat16_t...>),
-- else 'unknown' (never guessed); NULL for every other class. Tested once per distinct pair.
-- A CUDA graph launch recorded as one row (attributed.graph_id set, docs/figures.md §4) has no
-- kernel name: it is '[CUDA graph <graphId>]', class 'cuda_graph', whatever the rules say.
-- Strings are resolved once per distinct (short, demangled, graph) id triple (`judged_keys`).
-- `classified` carries no string: each row's name_id points into `kernel_names`, one row per
-- distinct (name, class, kind, precision) with a dense id in that order, which the queries that
-- print or match a name join (top_kernels, precision_times, pattern_unions, ...). Kernel rows
-- reach their name_id through the integer ids of the trace, never through the name strings.
-- stream_id: the row's CUDA stream (streamId of the kernel, graph, memcpy or memset table), within its
-- device; NULL where the export has none (window_unions.sql). comm_key: the NCCL communicator of the NCCL
-- call that launched the kernel (attribute_launch.sql, nccl_ranges.sql); NULL where the export does not say
-- (no NCCL range with a communicator ID around the launch, window attribution, memory operations).
CREATE OR REPLACE TEMP TABLE judged_keys AS
WITH rules AS (
    SELECT i AS priority, $classes[i] AS class, $patterns[i] AS pattern
    FROM range(1, len($classes) + 1) AS t(i)
),
precision_rules AS (
    SELECT i AS priority, $precisions[i] AS precision, $precision_patterns[i] AS pattern
    FROM range(1, len($precisions) + 1) AS t(i)
),
keys AS (
    SELECT DISTINCT coalesce(name_id, -1) AS name_key, coalesce(detail_id, -1) AS detail_key,
           coalesce(graph_id, -1) AS graph_key
    FROM attributed
),
spelled AS (
    SELECT k.name_key, k.detail_key,
           coalesce(s.value, '[unnamed kernel]') AS name, coalesce(d.value, '') AS detail
    FROM (SELECT DISTINCT name_key, detail_key FROM keys WHERE graph_key = -1) AS k
    LEFT JOIN raw_strings AS s ON s.id = k.name_key
    LEFT JOIN raw_strings AS d ON d.id = k.detail_key
),
judged AS (
    SELECT name_key, detail_key, name,
           CASE WHEN detail <> '' AND list_bool_or([regexp_matches(name, g) FOR g IN $generic_names])
                THEN detail ELSE name END AS judged_text
    FROM spelled
),
texts AS (
    SELECT DISTINCT judged_text FROM judged
),
matched_text AS (
    SELECT t.judged_text, arg_min(r.class, r.priority) AS class
    FROM texts AS t
    JOIN rules AS r ON regexp_matches(t.judged_text, r.pattern)
    GROUP BY t.judged_text
),
matched AS (
    SELECT j.name_key, j.detail_key, m.class
    FROM judged AS j
    JOIN matched_text AS m ON m.judged_text = j.judged_text
),
said AS (
    SELECT n.name_key, n.detail_key, arg_min(p.precision, p.priority) AS precision
    FROM spelled AS n
    JOIN precision_rules AS p ON regexp_matches(n.name || ' ' || n.detail, p.pattern)
    GROUP BY n.name_key, n.detail_key
)
SELECT n.name_key, n.detail_key, -1 AS graph_key, n.name, coalesce(m.class, 'other') AS class, 'kernel' AS kind,
       CASE WHEN list_contains($precision_classes, coalesce(m.class, 'other'))
            THEN coalesce(s.precision, 'unknown') END AS precision
FROM spelled AS n
LEFT JOIN matched AS m ON m.name_key = n.name_key AND m.detail_key = n.detail_key
LEFT JOIN said AS s ON s.name_key = n.name_key AND s.detail_key = n.detail_key
UNION ALL
SELECT name_key, detail_key, graph_key, '[CUDA graph ' || graph_key || ']', 'cuda_graph', 'kernel', CAST(NULL AS VARCHAR)
FROM keys
WHERE graph_key <> -1;

CREATE OR REPLACE TEMP TABLE kernel_names AS
SELECT row_number() OVER (ORDER BY name, class, kind, precision NULLS FIRST) AS name_id, name, class, kind, precision
FROM (SELECT name, class, kind, precision FROM judged_keys
      UNION
      SELECT name, 'memory', 'memory', CAST(NULL AS VARCHAR) FROM attributed_memops);

CREATE OR REPLACE TEMP TABLE classified AS
WITH key_ids AS (
    SELECT j.name_key, j.detail_key, j.graph_key, n.name_id
    FROM judged_keys AS j
    JOIN kernel_names AS n
      ON n.name = j.name AND n.class = j.class AND n.kind = j.kind
     AND n.precision IS NOT DISTINCT FROM j.precision
)
SELECT a.occurrence, a.global_pid, a.device_id, k.name_id, a.start_ns, a.end_ns, a.stream_id, a.comm_key
FROM attributed AS a
JOIN key_ids AS k
  ON k.name_key = coalesce(a.name_id, -1) AND k.detail_key = coalesce(a.detail_id, -1)
 AND k.graph_key = coalesce(a.graph_id, -1)
UNION ALL
SELECT o.occurrence, o.global_pid, o.device_id, n.name_id, o.start_ns, o.end_ns, o.stream_id,
       CAST(NULL AS UBIGINT)
FROM attributed_memops AS o
JOIN kernel_names AS n ON n.name = o.name AND n.kind = 'memory';

-- The classes of each short-name id (graph rows aside), as operator_work.sql joins them to the window's kernels:
-- the class(es) kernel_names gives the name's string, so that query looks the class up by the integer id (a
-- few rows) instead of spelling every kernel's name and joining strings (0.17 of its 0.54 CPU s at 8 M kernels).
CREATE OR REPLACE TEMP TABLE name_classes AS
SELECT DISTINCT j.name_key, n.class
FROM judged_keys AS j
JOIN kernel_names AS n ON n.name = j.name AND n.kind = 'kernel'
WHERE j.graph_key = -1;

DROP TABLE judged_keys;
