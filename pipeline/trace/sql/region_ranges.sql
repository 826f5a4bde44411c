-- reads: ranges
-- creates: region_ranges
-- Every NVTX range matching the job's region, numbered per process (SEMANTICS §3):
-- 1-based by start time, ties broken by the longer range first. Counting across
-- processes instead would make consecutive occurrences alternate between ranks.
-- $match: exact | prefix | contains | regex (RE2, unanchored search); case-sensitive.
-- The regex is '' unless $match is 'regex': DuckDB compiles the pattern whatever $match is,
-- and a prefix such as 'step(' is not a valid regex.
-- $domain: NVTX domain name, or NULL for any domain.
CREATE OR REPLACE TEMP TABLE region_ranges AS
WITH matched AS (
    SELECT *
    FROM ranges
    WHERE CASE $match
              WHEN 'exact' THEN name = $name
              WHEN 'prefix' THEN starts_with(name, $name)
              WHEN 'contains' THEN contains(name, $name)
              WHEN 'regex' THEN regexp_matches(name, CASE WHEN $match = 'regex' THEN $name ELSE '' END)
          END
      AND ($domain IS NULL OR domain = $domain)
)
SELECT
    row_number() OVER w AS occurrence,
    global_pid,
    pid,
    global_tid,
    start_ns,
    end_ns,
    name,
    lead(start_ns) OVER w - start_ns AS period_ns
FROM matched
WINDOW w AS (PARTITION BY global_pid ORDER BY start_ns, end_ns DESC, global_tid);
