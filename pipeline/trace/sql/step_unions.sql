-- reads: step_rows, kernel_names, occurrence_times
-- creates: step_unions
-- unions (step_unions): any = occurrence, any_part; kernels = occurrence, kernel; compute = occurrence, compute; comm = occurrence, comm; no_gemm = occurrence, no_gemm; no_attention = occurrence, no_attention; no_other = occurrence, no_other
-- The unions step_parts.sql cuts each step from (docs/compare.md), per occurrence, by one sorted pass
-- (trace/unions.py; a key value 1 marks the rows of the union, 0 the rest). Each row (step_rows.sql: the window's
-- classified rows; step_redo.sql: those of the steps a job of a shared window redoes) is clipped
-- to its own step [start_ns, start_ns + step_ns) of occurrence_times.sql, and to any later step it runs
-- into (a step starts no earlier than the previous one's end), so GPU work running past the next
-- occurrence's start (CPU ahead, docs/figures.md §6) counts in the step it runs in, once. Groups of a row:
-- c communication ($comm_class), g $gemm_classes, a $attention_classes, o any other kernel, m memory copies
-- and sets (kind 'memory'). Flags: any_part every row; kernel g, a, o, c; compute g, a, o; comm c;
-- no_gemm a, o, c; no_attention g, o, c; no_other g, a, c.
-- The later steps of a row running past its own (spilled) are found linear in occurrences (issue #33): the
-- steps numbered by start (numbered), two ASOF lookups give the first step starting at or after the row's
-- step end and the last starting before the row's end (starts: ties in start share their numbers' span),
-- and the numbers between are joined by equality; the join's own tests decide, as before. A join of steps
-- with later steps paired every step with every later one (450 M pairs at 30,000 occurrences).
-- The spilled rows are materialized (few): inlined, DuckDB 1.5's join order planned the 2 M rows of 25 steps
-- without one (bench/run_bench.py's trace, a window of all its occurrences) into a query that never ended,
-- waiting on no CPU.
WITH steps AS (
    SELECT occurrence, start_ns AS lo, start_ns + step_ns AS hi
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
grouped AS (
    SELECT c.occurrence, c.start_ns, c.end_ns, g.grp
    FROM step_rows AS c
    JOIN groups AS g ON g.name_id = c.name_id
),
numbered AS (
    SELECT *, row_number() OVER (ORDER BY lo, occurrence) AS n FROM steps
),
starts AS (
    SELECT lo, min(n) AS first_n, max(n) AS last_n FROM numbered GROUP BY lo
),
spilled AS MATERIALIZED (
    SELECT r.occurrence, r.start_ns, r.end_ns, r.grp, s.hi AS step_end_ns
    FROM grouped AS r
    JOIN steps AS s ON s.occurrence = r.occurrence AND r.end_ns > s.hi
),
later AS (
    SELECT r.*, unnest(range(a.first_n, b.last_n + 1)) AS n
    FROM spilled AS r
    ASOF JOIN starts AS a ON r.step_end_ns <= a.lo
    ASOF JOIN starts AS b ON r.end_ns > b.lo
),
clipped AS (
    SELECT s.occurrence, greatest(r.start_ns, s.lo) AS start_ns, least(r.end_ns, s.hi) AS end_ns, r.grp
    FROM grouped AS r
    JOIN steps AS s ON s.occurrence = r.occurrence
    WHERE least(r.end_ns, s.hi) > greatest(r.start_ns, s.lo)
    UNION ALL
    SELECT l.occurrence, greatest(r.start_ns, l.lo), least(r.end_ns, l.hi), r.grp
    FROM later AS r
    JOIN numbered AS l ON l.n = r.n
    WHERE l.lo >= r.step_end_ns AND l.lo < r.end_ns AND l.occurrence <> r.occurrence
      AND least(r.end_ns, l.hi) > greatest(r.start_ns, l.lo)
)
SELECT CAST(occurrence AS INTEGER) AS occurrence, CAST(1 AS UTINYINT) AS any_part,
       CAST(grp <> 'm' AS UTINYINT) AS kernel, CAST(grp IN ('g', 'a', 'o') AS UTINYINT) AS compute,
       CAST(grp = 'c' AS UTINYINT) AS comm, CAST(grp IN ('a', 'o', 'c') AS UTINYINT) AS no_gemm,
       CAST(grp IN ('g', 'o', 'c') AS UTINYINT) AS no_attention, CAST(grp IN ('g', 'a', 'c') AS UTINYINT) AS no_other,
       start_ns, end_ns
FROM clipped;
