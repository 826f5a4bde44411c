-- Kernels of the range's process that ran inside the range but have no launch row at all
-- (trimmed captures, CUDA graphs): reported separately so the user sees what was missed.
SELECT
    s.occurrence,
    count(*) AS kernel_count,
    coalesce(sum(least(k.end_ns, s.end_ns) - greatest(k.start_ns, s.start_ns)), 0) AS kernel_sum_ns
FROM kernels AS k
JOIN region_ranges AS s
  ON k.global_pid = s.global_pid
 AND k.start_ns < s.end_ns
 AND k.end_ns > s.start_ns
WHERE s.occurrence BETWEEN $first AND $last
  AND NOT EXISTS (
      SELECT 1 FROM launches AS l
      WHERE l.global_pid = k.global_pid AND l.correlation_id = k.correlation_id)
GROUP BY s.occurrence
ORDER BY s.occurrence;
