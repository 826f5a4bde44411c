-- reads: attributed_unions
-- creates: -
-- Per rank (process) and selected occurrence: the union of the kernel intervals it launched,
-- its own "GPU busy" time (SEMANTICS §5; computed with the other unions in kernel_union.sql).
SELECT k1 AS occurrence, k2 AS global_pid, union_ns
FROM attributed_unions
WHERE scope = 'rank'
ORDER BY occurrence, global_pid;
