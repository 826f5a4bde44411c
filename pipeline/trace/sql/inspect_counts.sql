-- reads: kernels, launches, ranges
-- creates: -
-- Event counts that tell what analyses a trace supports (kernels: kernel rows, not whole
-- CUDA graph launches; inspect_graphs.sql counts those).
SELECT
    (SELECT count(*) FROM kernels WHERE graph_id IS NULL) AS kernels,
    (SELECT count(*) FROM launches) AS launches,
    (SELECT count(*) FROM ranges) AS nvtx_ranges,
    (SELECT count(DISTINCT global_pid) FROM kernels) AS kernel_processes,
    (SELECT count(*) FROM kernels WHERE global_pid IS NULL) AS kernels_without_process,
    (SELECT min(start_ns) FROM kernels) AS first_kernel_ns,
    (SELECT max(end_ns) FROM kernels) AS last_kernel_ns;
