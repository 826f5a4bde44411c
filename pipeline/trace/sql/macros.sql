-- reads: -
-- creates: overlapping_ranges, name_matches, time_buckets, range_group, numbered_key, numbered_label
-- Macros every connection defines (pipeline/trace/connection.py connect()).

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

-- The rows of table `tbl` (start_ns, end_ns: ranges) listed under every time bucket they touch, so that
-- pairing events with the ranges holding them is an equality join on (process, bucket) and linear in
-- ranges (issue #10: 20,000 occurrences), never a join on the process alone, which pairs every event
-- with every range of its process. The time axis is cut into buckets of the ranges' mean length, or of
-- the envelope's length over the number of ranges where that is longer (sparse ranges: an interval
-- across the envelope then touches about one bucket per range), so the listing has at most about three
-- rows per range. The buckets only narrow the candidates; a join's own tests decide, so any width gives
-- the same pairs. Returns tbl's columns plus width_ns and bucket. The run's selected ranges
-- (select_occurrences.sql) and inspect's occurrences of every name group (inspect_regions.sql) use it.
CREATE OR REPLACE TEMP MACRO time_buckets(tbl) AS TABLE
WITH width AS (
    SELECT CAST(greatest(1, sum(end_ns - start_ns) // count(*), (max(end_ns) - min(start_ns)) // count(*)) AS BIGINT)
           AS width_ns
    FROM query_table(tbl)
)
SELECT s.*, w.width_ns, unnest(range(s.start_ns // w.width_ns, s.end_ns // w.width_ns + 1)) AS bucket
FROM query_table(tbl) AS s, width AS w;

-- Whether NVTX range name `name` matches a region's `pattern` under `how` (docs/figures.md §3): exact |
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

-- How `mfu inspect` groups range names (inspect_*.sql): range_group drops PyTorch's per-call ", seq = N, op_id = M"
-- suffix (select such a group with `match: prefix`); numbered_key makes names that differ only in their number
-- one group ('ProfilerStep#7', 'step 12', 'iter_3', 'Warm-up Step 1'). The number is the name's last run of
-- digits, followed by nothing but spaces or punctuation (so 'conv2d' and '/layer1/conv1/Conv' stay apart);
-- the key writes it as 0, so two names share a key exactly when they differ in that number only. numbered_label
-- writes it as '<n>' for the listing; discovery.py turns a label into the RE2 pattern selecting the group.
CREATE OR REPLACE TEMP MACRO range_group(name) AS regexp_replace(name, ', (seq|op_id) = [0-9]+.*$', '');
CREATE OR REPLACE TEMP MACRO numbered_key(name) AS regexp_replace(range_group(name), '[0-9]+([^0-9A-Za-z]*)$', '0\1');
CREATE OR REPLACE TEMP MACRO numbered_label(name) AS regexp_replace(range_group(name), '[0-9]+([^0-9A-Za-z]*)$', '<n>\1');
