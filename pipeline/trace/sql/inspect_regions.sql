-- reads: discovery_occ, discovery_work, discovery_depth, discovery_groups, discovery_warm, kernel_rows
-- creates: discovery_occ_work, discovery_warmup
-- Region discovery for `mfu inspect` / `mfu init`: every NVTX range-name group ranked by the GPU
-- work it encloses, with what makes a name look like one training/inference step.
-- Names are grouped as discovery_occurrences.sql groups them (PyTorch's suffixes dropped, names differing
-- only in their number one group). All set-based: no per-range loop, so millions of ranges are fine.
-- The occurrences of every name group come from discovery_occurrences.sql, the GPU work launched inside
-- each from discovery_work.sql; this file ranks the groups.

-- Per occurrence: wall = envelope of the ranges and their kernels; period = start of the next
-- occurrence in the same process minus this start.
CREATE OR REPLACE TEMP TABLE discovery_occ_work AS
SELECT o.*, greatest(o.end_ns, coalesce(w.last_end_ns, o.end_ns)) - o.start_ns AS wall_ns,
       coalesce(w.sum_ns, 0) AS kernel_sum_ns, coalesce(w.union_ns, 0) AS kernel_union_ns,
       coalesce(w.kernel_count, 0) AS kernel_count,
       lead(o.start_ns) OVER (PARTITION BY o.gid, o.global_pid ORDER BY o.occurrence)
           - o.start_ns AS period_ns
FROM discovery_occ AS o
LEFT JOIN (SELECT k1 AS occ_id, union_ns, sum_ns, interval_count AS kernel_count, last_end_ns
           FROM discovery_work WHERE scope = 'occurrence') AS w USING (occ_id);

-- Warm-up: the leading occurrences (k = 1, 2, ... while each holds) whose wall time, slowest
-- process, exceeds $warmup_factor x the group's median, or more if more end by the named warm-up's
-- end (in the process where most do). after_warmup: the fewest occurrences a process has after
-- them (all of them without a named warm-up). warmup_held_ns: the kernel time launched inside the
-- named warm-up (its group holding most, per process) of the occurrences still open when it ends.
CREATE OR REPLACE TEMP TABLE discovery_warmup AS
WITH per_k AS (
    SELECT gid, occurrence, max(wall_ns) AS wall_ns FROM discovery_occ_work GROUP BY gid, occurrence
),
slow AS (
    SELECT gid, occurrence,
           bool_and(wall_ns > $warmup_factor * median_ns)
               OVER (PARTITION BY gid ORDER BY occurrence ROWS UNBOUNDED PRECEDING) AS is_warmup
    FROM (SELECT *, median(wall_ns) OVER (PARTITION BY gid) AS median_ns FROM per_k)
),
by_time AS (
    SELECT gid, count(*) FILTER (WHERE is_warmup) AS slow_occurrences FROM slow GROUP BY gid
),
warm_work AS (
    SELECT global_pid, max(ns) AS warm_kernel_ns
    FROM (SELECT o.global_pid, o.gid, sum(o.kernel_sum_ns) AS ns
          FROM discovery_occ_work AS o JOIN discovery_groups AS g USING (gid)
          WHERE g.warmup_named GROUP BY ALL)
    GROUP BY global_pid
),
by_name AS (
    SELECT gid, max(inside) AS named_warmup_occurrences, min(n - inside) AS after_warmup,
           sum(held_ns) AS warmup_held_ns
    FROM (SELECT o.gid, o.global_pid, count(*) AS n,
                 count(*) FILTER (WHERE o.end_ns <= w.warm_end_ns) AS inside,
                 coalesce(max(k.warm_kernel_ns) FILTER (WHERE o.start_ns < w.warm_end_ns
                                                          AND o.end_ns > w.warm_end_ns), 0) AS held_ns
          FROM discovery_occ AS o
          LEFT JOIN discovery_warm AS w USING (global_pid)
          LEFT JOIN warm_work AS k USING (global_pid)
          GROUP BY o.gid, o.global_pid)
    GROUP BY gid
)
SELECT gid, greatest(slow_occurrences, named_warmup_occurrences) AS warmup_occurrences,
       named_warmup_occurrences, after_warmup, warmup_held_ns
FROM by_time JOIN by_name USING (gid);

-- One row per name group. gpu_top_groups: how many groups of the trace (not only the $limit listed) are
-- top-level, hold GPU work and are not named warm-up (one such group is `mfu init`'s proposal).
-- period_cv: coefficient of variation of the periods after the warm-up occurrences (at least the
-- first: step 1 is often slower), when at least two such periods remain in the process; otherwise of
-- all its periods. period_skip: the leading occurrences left out (the most of any process), so the text
-- can say which periods the figures describe. One period
-- has no spread: its CV is NULL, not 0 % (which would call two occurrences steady), and does not
-- count against a step-like name. The CV is sqrt(n*S2 - S1^2) / S1 over the exact integer sums S1, S2 of
-- the periods and their squares: stddev_pop's floating-point running sums depend on the order the threads
-- meet the rows in, which changed the CV's last digits from run to run (inspect --format json).
WITH total AS (SELECT sum(end_ns - start_ns) AS kernel_ns FROM kernel_rows),
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
SELECT g.name_group, g.domain, g.has_suffix, g.example, g.numbered, g.names, g.warmup_named, s.* EXCLUDE (gid),
       p.min_per_process AS occurrences_per_process_min,
       p.max_per_process AS occurrences_per_process_max,
       d.min_depth, d.max_depth, w.warmup_occurrences, w.named_warmup_occurrences, w.after_warmup, w.warmup_held_ns,
       s.kernel_sum_ns / nullif((SELECT kernel_ns FROM total), 0) AS kernel_share,
       count(*) FILTER (WHERE d.min_depth = 0 AND s.kernel_sum_ns > 0 AND NOT g.warmup_named) OVER ()
           AS gpu_top_groups,
       coalesce(d.min_depth = 0 AND w.after_warmup >= $min_repeats AND NOT g.warmup_named
                AND w.warmup_held_ns <= $max_warmup_held * s.kernel_sum_ns
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
