-- reads: kernel_rows, launch_keys, ranges
-- creates: -
-- Event counts that tell what analyses a trace supports (kernels: kernel rows, not whole
-- CUDA graph launches; inspect_graphs.sql counts those). kernels_without_launch: kernel rows with
-- no runtime row of their correlationId in their process (docs/figures.md §4), which launch attribution
-- cannot place: a capture that started mid-run, or CUDA API tracing off for part of it. kernel_rows and
-- launch_keys: inspect_read.sql, the one read of both tables.
-- backwards_*: GPU rows (kernels, graph launches) and NVTX ranges that end before they start, whose
-- negative time the discovery's durations, sums and shares subtract (the unions count it as none).
SELECT
    (SELECT count(*) FROM kernel_rows WHERE graph_id IS NULL) AS kernels,
    (SELECT CAST(coalesce(sum(launch_rows), 0) AS BIGINT) FROM launch_keys) AS launches,
    (SELECT count(*) FROM ranges) AS nvtx_ranges,
    (SELECT count(DISTINCT global_pid) FROM kernel_rows) AS kernel_processes,
    (SELECT count(*) FROM kernel_rows WHERE global_pid IS NULL) AS kernels_without_process,
    (SELECT count(*) FROM kernel_rows WHERE graph_id IS NULL AND launch_ns IS NULL) AS kernels_without_launch,
    (SELECT count(*) FROM kernel_rows WHERE end_ns < start_ns) AS backwards_kernels,
    (SELECT count(*) FROM ranges WHERE end_ns < start_ns) AS backwards_ranges,
    (SELECT min(start_ns) FROM kernel_rows) AS first_kernel_ns,
    (SELECT max(end_ns) FROM kernel_rows) AS last_kernel_ns;
