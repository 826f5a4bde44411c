-- reads: -
-- creates: interval_union
-- Macros every connection defines (pipeline/trace/open.py connect()).

-- The union algorithm of SEMANTICS §5 inside a SQL chain (inspect_regions.sql needs it mid-file).
-- The report's kernel unions, about ten groupings of the same rows, use the same rule from one
-- sorted copy instead (trace/unions.py, files declaring `-- unions (...)`): a window re-sorts
-- every row per call. Per group of the intervals in table (or
-- CTE) `tbl`, which has columns scope, k1, k2 (the group: any types, NULL allowed),
-- start_ns and end_ns. One sort per call, by (group, start): each interval adds what it reaches
-- beyond the running maximum end of the ones before it in its group,
--   max(0, end - max(start, covered_end)),
-- so touching intervals merge and a long interval covers later short ones. The order among
-- equal starts does not change the sum. A caller puts every grouping it needs into one `tbl`
-- with a distinct scope: one window pass, integer or short keys, no struct keys. Returns per group: union, summed durations, count, last end.
CREATE OR REPLACE TEMP MACRO interval_union(tbl) AS TABLE
WITH marked AS (
    SELECT scope, k1, k2, start_ns, end_ns,
           max(end_ns) OVER (PARTITION BY scope, k1, k2 ORDER BY start_ns
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS covered_end_ns
    FROM query_table(tbl)
)
SELECT scope, k1, k2,
       CAST(sum(greatest(0, end_ns - greatest(start_ns, coalesce(covered_end_ns, start_ns)))) AS BIGINT) AS union_ns,
       CAST(sum(end_ns - start_ns) AS BIGINT) AS sum_ns,
       count(*) AS interval_count,
       max(end_ns) AS last_end_ns
FROM marked
GROUP BY scope, k1, k2;
