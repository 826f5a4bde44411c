-- reads: classified, kernel_names
-- creates: stream_unions
-- unions (stream_unions): stream = device_id, stream_id
-- Attributed kernels (not memory operations) unioned per device and CUDA stream over all selected
-- occurrences (docs/figures.md §6: time shared by overlapping occurrences counts once), for
-- stream_times.sql. A missing device or stream is -1 (unions need integer keys). Each row's occurrence comes
-- along: a window shared by several jobs (analysis/sharing.py) sorts its rows once and cuts each job's
-- occurrences from them (trace/unions.py `cut`).
SELECT coalesce(c.device_id, -1) AS device_id, coalesce(c.stream_id, -1) AS stream_id, c.occurrence, c.start_ns,
       c.end_ns
FROM classified AS c
WHERE c.name_id IN (SELECT name_id FROM kernel_names WHERE kind = 'kernel');
