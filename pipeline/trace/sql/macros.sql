-- reads: -
-- creates: interval_union, overlapping_ranges, name_matches
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

-- Rows of table (or CTE) `tbl` (with start_ns and end_ns) paired with each selected range they
-- overlap in time (start before the range's end, end after its start), each pair once, whatever
-- the processes: the caller adds its process rule (range_pid). Linear in ranges (issue #10), no
-- join on the process alone: select_occurrences.sql lists each range under the time buckets it
-- touches (range_buckets); a row is listed under the buckets it touches inside the envelope of the
-- ranges, and a pair overlaps from the later of the two starts on, so it is kept under that
-- point's bucket only. Returns tbl's columns plus occurrence, range_pid, range_start_ns, range_end_ns.
CREATE OR REPLACE TEMP MACRO overlapping_ranges(tbl) AS TABLE
WITH bounds AS (
    SELECT min(start_ns) AS lo, max(end_ns) AS hi, any_value(width_ns) AS width_ns FROM range_buckets
),
listed AS (
    SELECT t.*, b.width_ns AS bucket_width_ns,
           unnest(range(greatest(t.start_ns, b.lo) // b.width_ns, least(t.end_ns, b.hi) // b.width_ns + 1)) AS bucket
    FROM query_table(tbl) AS t, bounds AS b
    WHERE t.start_ns < b.hi AND t.end_ns > b.lo
)
SELECT t.* EXCLUDE (bucket, bucket_width_ns), s.occurrence, s.global_pid AS range_pid,
       s.start_ns AS range_start_ns, s.end_ns AS range_end_ns
FROM listed AS t
JOIN range_buckets AS s
  ON s.bucket = t.bucket
 AND t.start_ns < s.end_ns
 AND t.end_ns > s.start_ns
WHERE t.bucket = greatest(t.start_ns, s.start_ns) // t.bucket_width_ns;

-- Whether NVTX range name `name` matches a region's `pattern` under `how` (SEMANTICS §3): exact |
-- prefix | contains | regex (RE2, unanchored search), case-sensitive. The regex is '' unless `how` is
-- 'regex': DuckDB compiles the pattern whatever `how` is, and a prefix such as 'step(' is not a
-- valid regex. region_ranges.sql selects with it; region_domains.sql says where else a name matches.
CREATE OR REPLACE TEMP MACRO name_matches(name, pattern, how) AS
CASE how
    WHEN 'exact' THEN name = pattern
    WHEN 'prefix' THEN starts_with(name, pattern)
    WHEN 'contains' THEN contains(name, pattern)
    WHEN 'regex' THEN regexp_matches(name, CASE WHEN how = 'regex' THEN pattern ELSE '' END)
END;
