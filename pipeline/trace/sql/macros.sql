-- reads: -
-- creates: interval_islands
-- Macros every connection defines (pipeline/trace.py connect()).

-- The union algorithm of SEMANTICS §5, written once: the islands of the intervals in table
-- (or CTE) `tbl`, which has columns grp (any partition key, e.g. a struct), start_ns, end_ns.
-- Sort by (start, end); an interval starting after the running maximum end of the ones before
-- it opens a new island (touching intervals merge). Returns one row per island with its
-- extent, the summed durations and the count of intervals in it; a union is sum(end - start).
CREATE OR REPLACE TEMP MACRO interval_islands(tbl) AS TABLE
WITH marked AS (
    SELECT grp, start_ns, end_ns,
           max(end_ns) OVER (PARTITION BY grp ORDER BY start_ns, end_ns
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_ns
    FROM query_table(tbl)
),
islands AS (
    SELECT *,
           sum(CASE WHEN prev_end_ns IS NULL OR start_ns > prev_end_ns THEN 1 ELSE 0 END)
               OVER (PARTITION BY grp ORDER BY start_ns, end_ns ROWS UNBOUNDED PRECEDING) AS island
    FROM marked
)
SELECT grp, min(start_ns) AS start_ns, max(end_ns) AS end_ns,
       sum(end_ns - start_ns) AS sum_ns, count(*) AS interval_count
FROM islands
GROUP BY grp, island;
