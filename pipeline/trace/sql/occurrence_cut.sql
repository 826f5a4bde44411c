-- reads: shared_occurrence_times
-- creates: occurrence_times
-- A job's occurrence_times.sql rows on a window shared by several jobs (analysis/sharing.py), for occurrences
-- $first..$last, from the window's (step_share.sql) rather than its ranges and unions again: every figure of an
-- occurrence is its own (its ranges and the unions of its kernels do not depend on which others were selected),
-- but for the step, which occurrence_times.sql ends at the next selected occurrence's start when that one starts
-- before the envelope ends: the same next occurrence as the window's, but for the job's last, which has none
-- and whose step is its wall. The same table and the same rows as occurrence_times.sql over the job's own window.
CREATE OR REPLACE TEMP TABLE occurrence_times AS
SELECT * REPLACE (CASE WHEN occurrence = $last THEN wall_ns ELSE step_ns END AS step_ns)
FROM shared_occurrence_times
WHERE occurrence BETWEEN $first AND $last;

SELECT occurrence, processes, pids, start_ns, cpu_range_ns, wall_ns, kernel_sum_ns, kernel_union_ns,
       kernel_count, step_ns
FROM occurrence_times
ORDER BY occurrence;
