-- reads: range_events, name_matches
-- creates: region_ranges, nested_ranges, unclosed_ranges
-- Every NVTX range matching the job's region, numbered per process (docs/figures.md §3):
-- 1-based by start time, ties broken by the longer range first. Counting across
-- processes instead would make consecutive occurrences alternate between ranks.
-- $match: exact | prefix | contains | regex (RE2, unanchored search); case-sensitive (name_matches,
-- macros.sql).
-- $domain: NVTX domain name, or NULL for any domain.
-- A matching range inside another matching range of the same process (it ends no later than
-- one that started before it) is not an occurrence: its work is inside the outer one already
-- (docs/figures.md §6). Such ranges go to `nested_ranges`, so the report can say what was folded.
-- A range that ends before it starts is no interval, so nested in nothing: it stays a range of
-- its own, and selected it is refused as a trace problem (exit 4, checks.scope.ranges_have_length),
-- not folded into the range it starts in as if the trace were sound.
-- A matching range never closed (end NULL: the capture ended inside it) is no occurrence; it
-- goes to `unclosed_ranges`, so the report can say it was not counted. Its NULL end adds nothing
-- to the running max, so the other ranges' nesting is what it would be without it.
CREATE OR REPLACE TEMP TABLE matched_ranges AS
WITH matched AS (
    SELECT *
    FROM range_events
    WHERE name_matches(name, $name, $match)
      AND ($domain IS NULL OR domain = $domain)
)
SELECT *,
       coalesce(end_ns >= start_ns
                AND end_ns <= max(end_ns) OVER (PARTITION BY global_pid ORDER BY start_ns, end_ns DESC, global_tid
                                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), false) AS nested
FROM matched;

CREATE OR REPLACE TEMP TABLE nested_ranges AS
SELECT global_pid, pid, global_tid, start_ns, end_ns, name FROM matched_ranges WHERE nested;

CREATE OR REPLACE TEMP TABLE unclosed_ranges AS
SELECT global_pid, pid, global_tid, start_ns, name FROM matched_ranges WHERE end_ns IS NULL;

CREATE OR REPLACE TEMP TABLE region_ranges AS
SELECT
    row_number() OVER w AS occurrence,
    global_pid,
    pid,
    global_tid,
    start_ns,
    end_ns,
    name,
    lead(start_ns) OVER w - start_ns AS period_ns
FROM matched_ranges
WHERE NOT nested AND end_ns IS NOT NULL
WINDOW w AS (PARTITION BY global_pid ORDER BY start_ns, end_ns DESC, global_tid);

DROP TABLE matched_ranges;
