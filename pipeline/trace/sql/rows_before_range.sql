-- reads: classified, kernel_names, selected_ranges
-- creates: -
-- Attributed rows (kernels, CUDA graph launches, memory operations) that start before the selected
-- range of their own process, per occurrence and source table. With process or thread attribution
-- a row belongs to a range because the CUDA call that launched it started inside that range, and no
-- GPU work starts before the call that launched it: such a start cannot be right (a damaged or
-- edited export, a broken clock), whatever its sign (real exports do hold negative times: events
-- before the session's time zero). It would stretch the kernel union and sum back in time, past
-- the wall (which starts at the first range), and lower the active-time ratio; build_window refuses
-- the trace (docs/figures.md §6). Window attribution clips rows to the range, so none is found there.
-- source: the raw_* view the row came from (trace.tables names its export table).
SELECT c.occurrence,
       CASE WHEN n.kind = 'memory' AND n.name = '[CUDA memset]' THEN 'raw_memset'
            WHEN n.kind = 'memory' THEN 'raw_memcpy'
            WHEN n.class = 'cuda_graph' THEN 'raw_graph_trace'
            ELSE 'raw_kernel' END AS source,
       count(*) AS rows,
       max(r.start_ns - c.start_ns) AS most_early_ns
FROM classified AS c
JOIN selected_ranges AS r ON r.occurrence = c.occurrence AND r.global_pid = c.global_pid
JOIN kernel_names AS n ON n.name_id = c.name_id
WHERE c.start_ns < r.start_ns
GROUP BY ALL
ORDER BY source, c.occurrence;
