-- reads: attributed, launched, comm_launches, nccl_ranges, unlaunched, negative_kernels, candidate_launches, range_buckets, attributed_memops, kernel_copies, memop_copies, name_classes
-- creates: -
-- The end of building a window (measure.build_window): what only the build read goes, so the
-- memory DuckDB holds through the analyses is the window the analyses read (selected_ranges,
-- classified, kernel_names). At 8 M kernels `attributed` (3.2 M rows, nine columns) and
-- `launched` were 300 MB of DuckDB's 512 MB; their rows live on in `classified`.
-- `unlaunched` and `range_buckets` exist with process or thread attribution only (attribute_launch.sql).
DROP TABLE IF EXISTS attributed;
DROP TABLE IF EXISTS launched;
DROP TABLE IF EXISTS comm_launches;
DROP TABLE IF EXISTS nccl_ranges;
DROP TABLE IF EXISTS unlaunched;
DROP TABLE IF EXISTS negative_kernels;
DROP TABLE IF EXISTS candidate_launches;
DROP TABLE IF EXISTS range_buckets;
DROP TABLE IF EXISTS attributed_memops;
DROP TABLE IF EXISTS kernel_copies;
DROP TABLE IF EXISTS memop_copies;
DROP TABLE IF EXISTS name_classes;
-- Re-setting DuckDB's memory limit to the value it has ($memory_limit, trace/connection.py) makes it
-- hand the memory of what was dropped back to the system now, not after the next big query:
-- at 8 M kernels the process goes from 0.63 to 0.30 GB before the union pass allocates.
SET memory_limit = $memory_limit;
