-- reads: classified, kernel_names, occurrence_times
-- creates: -
-- What ran at each instant of each occurrence's step (docs/compare.md, "what changed"): the step
-- [start_ns, start_ns + step_ns) of occurrence_times.sql is cut at every start and end of a classified
-- row on any device, and each piece gets one part by what ran in it, on at least one GPU:
--   idle            no attributed kernel and no memory operation
--   comm_overlap    communication ($comm_class) and some compute kernel at once
--   comm            communication without compute (memory operations may run too)
--   gemm            compute of $gemm_classes only (gemm, convolution), no communication
--   attention       compute of $attention_classes only
--   other_compute   compute of the other kernel classes only (elementwise, norms, fused, other, ...)
--   mixed_compute   compute of two or more of these three groups at once, no communication
--   memory          memory copies and sets (kind 'memory') only
-- The pieces tile the step, so the parts of an occurrence add up to its step_ns exactly (integer ns).
-- A step holds what ran during it, whichever occurrence launched it: rows are joined to steps by time and
-- clipped to them, so GPU work of an occurrence running past the next one's start (CPU ahead, SEMANTICS §6)
-- counts in the step it runs in, once. One row per occurrence, every part a column.
WITH steps AS (
    SELECT occurrence, start_ns AS lo, start_ns + step_ns AS hi, step_ns
    FROM occurrence_times
),
groups AS (
    SELECT name_id,
           CASE WHEN kind = 'memory' THEN 'm'
                WHEN class = $comm_class THEN 'c'
                WHEN list_contains($gemm_classes, class) THEN 'g'
                WHEN list_contains($attention_classes, class) THEN 'a'
                ELSE 'o' END AS grp
    FROM kernel_names
),
clipped AS (
    SELECT s.occurrence, greatest(c.start_ns, s.lo) AS s, least(c.end_ns, s.hi) AS e, g.grp
    FROM classified AS c
    JOIN groups AS g ON g.name_id = c.name_id
    JOIN steps AS s ON c.start_ns < s.hi AND c.end_ns > s.lo
),
events AS (
    SELECT occurrence, s AS t, grp, 1 AS d FROM clipped
    UNION ALL SELECT occurrence, e, grp, -1 FROM clipped
    UNION ALL SELECT occurrence, lo, NULL, 0 FROM steps
    UNION ALL SELECT occurrence, hi, NULL, 0 FROM steps
),
points AS (
    SELECT occurrence, t,
           coalesce(sum(d) FILTER (WHERE grp = 'g'), 0) AS dg, coalesce(sum(d) FILTER (WHERE grp = 'a'), 0) AS da,
           coalesce(sum(d) FILTER (WHERE grp = 'o'), 0) AS dother, coalesce(sum(d) FILTER (WHERE grp = 'c'), 0) AS dc,
           coalesce(sum(d) FILTER (WHERE grp = 'm'), 0) AS dm
    FROM events
    GROUP BY occurrence, t
),
pieces AS (
    SELECT occurrence, lead(t) OVER w - t AS len,
           sum(dg) OVER r > 0 AS g, sum(da) OVER r > 0 AS a, sum(dother) OVER r > 0 AS o,
           sum(dc) OVER r > 0 AS c, sum(dm) OVER r > 0 AS m
    FROM points
    WINDOW w AS (PARTITION BY occurrence ORDER BY t),
           r AS (PARTITION BY occurrence ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
labelled AS (
    SELECT occurrence, len,
           CASE WHEN c AND (g OR a OR o) THEN 'comm_overlap'
                WHEN c THEN 'comm'
                WHEN CAST(g AS INTEGER) + CAST(a AS INTEGER) + CAST(o AS INTEGER) > 1 THEN 'mixed_compute'
                WHEN g THEN 'gemm'
                WHEN a THEN 'attention'
                WHEN o THEN 'other_compute'
                WHEN m THEN 'memory'
                ELSE 'idle' END AS part
    FROM pieces
    WHERE len IS NOT NULL
)
SELECT s.occurrence, CAST(s.step_ns AS BIGINT) AS step_ns,
       CAST(coalesce(sum(l.len) FILTER (WHERE l.part = 'gemm'), 0) AS BIGINT) AS gemm_ns,
       CAST(coalesce(sum(l.len) FILTER (WHERE l.part = 'attention'), 0) AS BIGINT) AS attention_ns,
       CAST(coalesce(sum(l.len) FILTER (WHERE l.part = 'other_compute'), 0) AS BIGINT) AS other_compute_ns,
       CAST(coalesce(sum(l.len) FILTER (WHERE l.part = 'mixed_compute'), 0) AS BIGINT) AS mixed_compute_ns,
       CAST(coalesce(sum(l.len) FILTER (WHERE l.part = 'comm'), 0) AS BIGINT) AS comm_ns,
       CAST(coalesce(sum(l.len) FILTER (WHERE l.part = 'comm_overlap'), 0) AS BIGINT) AS comm_overlap_ns,
       CAST(coalesce(sum(l.len) FILTER (WHERE l.part = 'memory'), 0) AS BIGINT) AS memory_ns,
       CAST(coalesce(sum(l.len) FILTER (WHERE l.part = 'idle'), 0) AS BIGINT) AS idle_ns
FROM steps AS s
LEFT JOIN labelled AS l ON l.occurrence = s.occurrence
GROUP BY s.occurrence, s.step_ns
ORDER BY s.occurrence;
