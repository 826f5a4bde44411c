-- reads: kernels, launches, ranges
-- creates: -
-- Event counts that tell what analyses a trace supports (kernels: kernel rows, not whole
-- CUDA graph launches; inspect_graphs.sql counts those). kernels_without_launch: kernel rows with
-- no runtime row of their correlationId in their process (SEMANTICS §4), which launch attribution
-- cannot place: a capture that started mid-run, or CUDA API tracing off for part of it.
-- backwards_*: GPU rows (kernels, graph launches) and NVTX ranges that end before they start, whose
-- negative time the discovery's durations, sums and shares subtract (the unions count it as none).
SELECT
    (SELECT count(*) FROM kernels WHERE graph_id IS NULL) AS kernels,
    (SELECT count(*) FROM launches) AS launches,
    (SELECT count(*) FROM ranges) AS nvtx_ranges,
    (SELECT count(DISTINCT global_pid) FROM kernels) AS kernel_processes,
    (SELECT count(*) FROM kernels WHERE global_pid IS NULL) AS kernels_without_process,
    (SELECT count(*) FROM kernels AS k
     WHERE k.graph_id IS NULL
       AND NOT EXISTS (SELECT 1 FROM launches AS l
                       WHERE l.global_pid = k.global_pid AND l.correlation_id = k.correlation_id)
    ) AS kernels_without_launch,
    (SELECT count(*) FROM kernels WHERE end_ns < start_ns) AS backwards_kernels,
    (SELECT count(*) FROM ranges WHERE end_ns < start_ns) AS backwards_ranges,
    (SELECT min(start_ns) FROM kernels) AS first_kernel_ns,
    (SELECT max(end_ns) FROM kernels) AS last_kernel_ns;
