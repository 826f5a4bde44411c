-- reads: attributed_unions
-- creates: -
-- Per rank (process) and selected occurrence: the union of the kernel intervals it launched,
-- its own "GPU busy" time (SEMANTICS §5; computed with the other unions in attributed_unions.sql).
SELECT k1 AS occurrence, nullif(k2, -1) AS global_pid, union_ns
FROM attributed_unions
WHERE scope = 'rank'
ORDER BY occurrence, global_pid;
