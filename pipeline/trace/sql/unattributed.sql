-- reads: unlaunched, launches
-- creates: -
-- Kernels of the range's process that ran inside the range but have no launch row at all
-- (trimmed captures, CUDA graphs): reported separately so the user sees what was missed.
-- attribute_launch.sql found the candidates (`unlaunched`, in its one read of the kernel
-- table); only they are looked up in the launch table, which is never hashed whole.
SELECT
    u.occurrence,
    count(*) AS kernel_count,
    coalesce(sum(u.inside_ns), 0) AS kernel_sum_ns
FROM unlaunched AS u
WHERE NOT EXISTS (
    SELECT 1 FROM launches AS l
    WHERE l.global_pid = u.global_pid AND l.correlation_id = u.correlation_id)
GROUP BY u.occurrence
ORDER BY u.occurrence;
