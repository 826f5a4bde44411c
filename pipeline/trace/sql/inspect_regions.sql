-- reads: ranges, launches, kernels, interval_union
-- creates: discovery_ranges, discovery_groups, discovery_depth, discovery_occ, discovery_kernels, discovery_work, discovery_occ_work, discovery_warmup
-- Region discovery for `mfu inspect` / `mfu init`: every NVTX range-name group ranked by the GPU
-- work it encloses, with what makes a name look like one training/inference step.
-- Names are grouped with PyTorch's ", seq = N, op_id = M" suffixes removed (select them with
-- `match: prefix`). All set-based: no per-range loop, so millions of ranges are fine.
--
-- Occurrences of a group are counted per process as in a job (SEMANTICS §3, §6): ranges of the
-- group that overlap in one process fold into the outermost (an island); islands open on a
-- strict overlap, so back-to-back steps stay two occurrences.
-- gid: a hash of (name group, domain), so windows partition on an integer, not on strings; the
-- per-range table keeps numbers only, the names live once per distinct name in discovery_groups.
-- A range without a name (no text, and a textId in no StringIds row: a damaged export) is no
-- candidate: no job can select it, and all such ranges would form one group of unrelated ranges.
CREATE OR REPLACE TEMP TABLE discovery_ranges AS
SELECT hash(regexp_replace(name, ', (seq|op_id) = [0-9]+.*$', ''), domain) AS gid,
       global_pid, pid, global_tid, start_ns, end_ns
FROM ranges
WHERE name IS NOT NULL;

CREATE OR REPLACE TEMP TABLE discovery_groups AS
WITH names AS (
    SELECT DISTINCT name, domain FROM ranges WHERE name IS NOT NULL
),
named AS (
    SELECT regexp_replace(name, ', (seq|op_id) = [0-9]+.*$', '') AS name_group, name, domain FROM names
)
SELECT hash(name_group, domain) AS gid, any_value(name_group) AS name_group, any_value(domain) AS domain,
       bool_or(name <> name_group) AS has_suffix, min(name) AS example
FROM named
GROUP BY hash(name_group, domain);

-- Nesting depth in the range's own thread: ranges open when it starts (push/pop ranges nest per
-- thread). A sweep over start (+1) and end (-1) events; at equal times ends go first, and of two
-- ranges starting together the longer one is the outer.
CREATE OR REPLACE TEMP TABLE discovery_depth AS
WITH events AS (
    SELECT global_tid, start_ns AS t, 1 AS ord, -end_ns AS tie, 1 AS delta, gid FROM discovery_ranges
    UNION ALL
    SELECT global_tid, end_ns, 0, 0, -1, NULL FROM discovery_ranges
),
swept AS (
    SELECT gid, delta,
           sum(delta) OVER (PARTITION BY global_tid ORDER BY t, ord, tie ROWS UNBOUNDED PRECEDING) - 1 AS depth
    FROM events
)
SELECT gid, min(depth) AS min_depth, max(depth) AS max_depth
FROM swept WHERE delta = 1
GROUP BY gid;

CREATE OR REPLACE TEMP TABLE discovery_occ AS
WITH marked AS (
    SELECT gid, global_pid, pid, start_ns, end_ns,
           max(end_ns) OVER (PARTITION BY gid, global_pid ORDER BY start_ns, end_ns DESC
                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_ns
    FROM discovery_ranges
),
islands AS (
    SELECT *, sum(CASE WHEN prev_end_ns IS NULL OR start_ns >= prev_end_ns THEN 1 ELSE 0 END)
                  OVER (PARTITION BY gid, global_pid ORDER BY start_ns, end_ns DESC
                        ROWS UNBOUNDED PRECEDING) AS occurrence
    FROM marked
)
SELECT row_number() OVER () AS occ_id, *,
       coalesce(lead(start_ns) OVER (PARTITION BY gid, global_pid ORDER BY occurrence) = end_ns, false) AS shared_end
FROM (SELECT gid, global_pid, pid, occurrence, min(start_ns) AS start_ns, max(end_ns) AS end_ns, count(*) AS ranges
      FROM islands
      GROUP BY gid, global_pid, pid, occurrence);

-- Kernels launched inside an occurrence by its process (process attribution, SEMANTICS §4).
-- Each kernel gets its launch time once (duplicate runtime rows of one launch key: the first),
-- then falls in at most one occurrence per name group: a launch exactly at the end of an
-- occurrence that the next one starts at goes to the next. The process equality is written as
-- a difference so DuckDB plans a range join on the two time bounds, not a hash join per process.
CREATE OR REPLACE TEMP TABLE discovery_kernels AS
WITH launched AS (
    SELECT global_pid, correlation_id, min(start_ns) AS launch_ns FROM launches GROUP BY global_pid, correlation_id
),
timed AS (
    SELECT k.global_pid, l.launch_ns, k.start_ns, k.end_ns
    FROM kernels AS k
    JOIN launched AS l ON l.global_pid = k.global_pid AND l.correlation_id = k.correlation_id
)
SELECT 'occurrence' AS scope, o.occ_id AS k1, CAST(NULL AS BIGINT) AS k2, t.start_ns, t.end_ns
FROM timed AS t
JOIN discovery_occ AS o
  ON t.launch_ns >= o.start_ns AND t.launch_ns <= o.end_ns AND t.global_pid - o.global_pid = 0
 AND (t.launch_ns < o.end_ns OR NOT o.shared_end);

CREATE OR REPLACE TEMP TABLE discovery_work AS
SELECT k1 AS occ_id, union_ns, sum_ns, interval_count AS kernel_count, last_end_ns
FROM interval_union('discovery_kernels');

-- Per occurrence: wall = envelope of the ranges and their kernels; period = start of the next
-- occurrence in the same process minus this start.
CREATE OR REPLACE TEMP TABLE discovery_occ_work AS
SELECT o.*, greatest(o.end_ns, coalesce(w.last_end_ns, o.end_ns)) - o.start_ns AS wall_ns,
       coalesce(w.sum_ns, 0) AS kernel_sum_ns, coalesce(w.union_ns, 0) AS kernel_union_ns,
       coalesce(w.kernel_count, 0) AS kernel_count,
       lead(o.start_ns) OVER (PARTITION BY o.gid, o.global_pid ORDER BY o.occurrence)
           - o.start_ns AS period_ns
FROM discovery_occ AS o
LEFT JOIN discovery_work AS w USING (occ_id);

-- Warm-up: the leading occurrences (k = 1, 2, ... while each holds) whose wall time, slowest
-- process, exceeds $warmup_factor x the group's median.
CREATE OR REPLACE TEMP TABLE discovery_warmup AS
WITH per_k AS (
    SELECT gid, occurrence, max(wall_ns) AS wall_ns FROM discovery_occ_work GROUP BY gid, occurrence
),
slow AS (
    SELECT gid, occurrence,
           bool_and(wall_ns > $warmup_factor * median_ns)
               OVER (PARTITION BY gid ORDER BY occurrence ROWS UNBOUNDED PRECEDING) AS is_warmup
    FROM (SELECT *, median(wall_ns) OVER (PARTITION BY gid) AS median_ns FROM per_k)
)
SELECT gid, count(*) FILTER (WHERE is_warmup) AS warmup_occurrences FROM slow GROUP BY gid;

-- One row per name group. period_cv: coefficient of variation of the periods after the warm-up
-- occurrences (at least the first: step 1 is often slower), when at least two such periods remain
-- in the process; otherwise of all its periods. period_skip: the leading occurrences left out
-- (the most of any process), so the text can say which periods the figures describe. One period
-- has no spread: its CV is NULL, not 0 % (which would call two occurrences steady), and does not
-- count against a step-like name. The CV is sqrt(n*S2 - S1^2) / S1 over the exact integer sums S1, S2 of
-- the periods and their squares: stddev_pop's floating-point running sums depend on the order the threads
-- meet the rows in, which changed the CV's last digits from run to run (inspect --format json).
WITH total AS (SELECT sum(end_ns - start_ns) AS kernel_ns FROM kernels),
per_process AS (
    SELECT gid, min(n) AS min_per_process, max(n) AS max_per_process
    FROM (SELECT gid, global_pid, count(*) AS n FROM discovery_occ_work GROUP BY ALL)
    GROUP BY gid
),
stats AS (
    SELECT gid,
           count(*) AS occurrences,
           count(DISTINCT global_pid) AS processes,
           sum(ranges) AS ranges,
           CAST(median(end_ns - start_ns) AS BIGINT) AS median_ns,
           CAST(median(wall_ns) AS BIGINT) AS median_wall_ns,
           CAST(median(kernel_sum_ns) AS BIGINT) AS median_kernel_sum_ns,
           CAST(median(kernel_union_ns) AS BIGINT) AS median_kernel_union_ns,
           CAST(median(kernel_count) AS BIGINT) AS median_kernel_count,
           sum(kernel_sum_ns) AS kernel_sum_ns,
           CAST(median(kept_period_ns) AS BIGINT) AS period_ns,
           count(kept_period_ns) AS periods,
           CASE WHEN count(kept_period_ns) >= 2
                THEN sqrt(CAST(count(kept_period_ns) * sum(CAST(kept_period_ns AS HUGEINT) * kept_period_ns)
                               - sum(kept_period_ns) * sum(kept_period_ns) AS DOUBLE))
                     / nullif(CAST(sum(kept_period_ns) AS DOUBLE), 0) END AS period_cv,
           max(skip) AS period_skip
    FROM (SELECT *, CASE WHEN occurrence > skip THEN period_ns END AS kept_period_ns
          FROM (SELECT o.*, CASE WHEN max(o.occurrence) OVER (PARTITION BY o.gid, o.global_pid)
                                      >= greatest(1, w.warmup_occurrences) + 3
                                 THEN greatest(1, w.warmup_occurrences) ELSE 0 END AS skip
                FROM discovery_occ_work AS o JOIN discovery_warmup AS w USING (gid)))
    GROUP BY gid
)
SELECT g.name_group, g.domain, g.has_suffix, g.example, s.* EXCLUDE (gid),
       p.min_per_process AS occurrences_per_process_min,
       p.max_per_process AS occurrences_per_process_max,
       d.min_depth, d.max_depth, w.warmup_occurrences,
       s.kernel_sum_ns / nullif((SELECT kernel_ns FROM total), 0) AS kernel_share,
       coalesce(d.min_depth = 0 AND p.min_per_process >= $min_repeats
                AND s.kernel_sum_ns >= $min_share * (SELECT kernel_ns FROM total)
                AND (s.periods < 2 OR s.period_cv <= $max_period_cv), false) AS step_like
FROM stats AS s
JOIN per_process AS p USING (gid)
JOIN discovery_depth AS d USING (gid)
JOIN discovery_groups AS g USING (gid)
JOIN discovery_warmup AS w USING (gid)
ORDER BY step_like DESC, kernel_share DESC NULLS LAST, median_kernel_union_ns DESC, occurrences DESC,
         name_group, domain NULLS FIRST
LIMIT $limit;
