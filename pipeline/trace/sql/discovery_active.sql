-- reads: kernel_rows, raw_memcpy, raw_memset, gpu_work
-- creates: -
-- The capture's GPU-active window per process, what `mfu init` proposes as region kind gpu_active when no
-- NVTX range marks a step: from its first GPU row's start (kernel, whole CUDA graph launch or memory
-- operation) to its last row's end: the rows of gpu_work.sql, the run's own (window_ranges.sql), read from
-- inspect's copy of the kernels; a row without a process id is a process's as there. span_ns is the window's
-- length; rows counts what is inside, busy_rows those with a length (none: the export lost the GPU timestamps).
SELECT global_pid, count(*) AS rows, count(*) FILTER (WHERE end_ns > start_ns) AS busy_rows,
       min(start_ns) AS start_ns, max(end_ns) AS end_ns,
       max(end_ns) - min(start_ns) AS span_ns
FROM gpu_work(kernel_rows)
GROUP BY global_pid
ORDER BY span_ns DESC, global_pid;
