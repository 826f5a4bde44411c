-- reads: attributed, interval_islands
-- creates: -
-- Per rank (process) and selected occurrence: the union of the kernel intervals it launched,
-- its own "GPU busy" time (SEMANTICS §5 union, interval_islands in views.sql).
WITH scoped AS (
    SELECT {'occurrence': occurrence, 'global_pid': global_pid} AS grp, start_ns, end_ns
    FROM attributed
)
SELECT grp.occurrence AS occurrence, grp.global_pid AS global_pid, sum(end_ns - start_ns) AS union_ns
FROM interval_islands('scoped')
GROUP BY grp
ORDER BY occurrence, global_pid;
