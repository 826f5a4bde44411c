-- reads: attributed, attributed_memops, raw_strings
-- creates: classified
-- Each attributed kernel gets the class of the first rule whose RE2 pattern matches its
-- name ($classes[i] / $patterns[i], tested in list order), else 'other'; attributed memory
-- copies and sets are class 'memory'. Names are matched once each, not once per kernel.
-- kind: 'kernel' or 'memory' (copies run on copy engines and stay out of overlap figures).
CREATE OR REPLACE TEMP TABLE classified AS
WITH rules AS (
    SELECT i AS priority, $classes[i] AS class, $patterns[i] AS pattern
    FROM range(1, len($classes) + 1) AS t(i)
),
named AS (
    SELECT a.*, coalesce(s.value, '[unnamed kernel]') AS name
    FROM attributed AS a
    LEFT JOIN raw_strings AS s ON s.id = a.name_id
),
matched AS (
    SELECT n.name, arg_min(r.class, r.priority) AS class
    FROM (SELECT DISTINCT name FROM named) AS n
    JOIN rules AS r ON regexp_matches(n.name, r.pattern)
    GROUP BY n.name
)
SELECT n.occurrence, n.global_pid, n.device_id, n.name,
       coalesce(m.class, 'other') AS class, 'kernel' AS kind, n.start_ns, n.end_ns
FROM named AS n
LEFT JOIN matched AS m ON m.name = n.name
UNION ALL
SELECT occurrence, global_pid, device_id, name, 'memory', 'memory', start_ns, end_ns
FROM attributed_memops;
