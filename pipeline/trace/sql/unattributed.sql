-- reads: selected_ranges, kernels, launches
-- creates: -
-- Kernels of the range's process that ran inside the range but have no launch row at all
-- (trimmed captures, CUDA graphs): reported separately so the user sees what was missed.
-- Scale (issue #7): the kernels inside the ranges are found first, with the envelope of the
-- ranges pushed into the kernel scan, and materialized (a handful of rows); only then are
-- launch rows looked up for them, so the launch table is never loaded into a hash table.
WITH envelope AS (
    SELECT min(start_ns) AS lo, max(end_ns) AS hi FROM selected_ranges
),
inside AS MATERIALIZED (
    SELECT
        s.occurrence,
        k.global_pid,
        k.correlation_id,
        least(k.end_ns, s.end_ns) - greatest(k.start_ns, s.start_ns) AS inside_ns
    FROM kernels AS k
    JOIN selected_ranges AS s
      ON k.global_pid = s.global_pid
     AND k.start_ns < s.end_ns
     AND k.end_ns > s.start_ns
    WHERE k.start_ns < (SELECT hi FROM envelope) AND k.end_ns > (SELECT lo FROM envelope)
)
SELECT
    i.occurrence,
    count(*) AS kernel_count,
    coalesce(sum(i.inside_ns), 0) AS kernel_sum_ns
FROM inside AS i
WHERE NOT EXISTS (
    SELECT 1 FROM launches AS l
    WHERE l.global_pid = i.global_pid AND l.correlation_id = i.correlation_id)
GROUP BY i.occurrence
ORDER BY i.occurrence;
