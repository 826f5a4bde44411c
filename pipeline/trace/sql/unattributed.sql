-- reads: unlaunched, launches
-- creates: candidate_launches
-- Kernels of the range's process that ran inside the range but have no launch row at all
-- (trimmed captures, CUDA graphs): reported separately so the user sees what was missed.
-- attribute_launch.sql found the candidates (`unlaunched`, in its one read of the kernel
-- table); only they are looked up in the launch table, which is never hashed whole. The launch
-- rows of their correlationIds, any process, are kept (`candidate_launches`, a few rows): one read
-- of the launch table answers this and negative_launches.sql (a launch row whose thread id is
-- negative belongs to no process, so its kernel would be counted here as never launched).
CREATE OR REPLACE TEMP TABLE candidate_launches AS
SELECT l.start_ns, l.global_tid, l.global_pid, l.correlation_id
FROM launches AS l
WHERE l.correlation_id IN (SELECT correlation_id FROM unlaunched);

SELECT
    u.occurrence,
    count(*) AS kernel_count,
    coalesce(sum(u.inside_ns), 0) AS kernel_sum_ns
FROM unlaunched AS u
WHERE NOT EXISTS (
    SELECT 1 FROM candidate_launches AS l
    WHERE l.global_pid = u.global_pid AND l.correlation_id = u.correlation_id)
GROUP BY u.occurrence
ORDER BY u.occurrence;
