-- reads: window_unions
-- creates: -
-- Per rank (process) and selected occurrence: the union of the kernel intervals it launched,
-- its own "GPU busy" time (docs/figures.md §5; computed with the other unions in window_unions.sql).
SELECT k2 AS occurrence, nullif(k3, -1) AS global_pid, union_ns
FROM window_unions
WHERE scope = 'rank' AND k1 = 1
ORDER BY occurrence, global_pid;
