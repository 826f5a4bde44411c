-- reads: raw_nvtx, raw_strings, raw_runtime, raw_kernel, raw_graph_trace, raw_gpu
-- creates: nvtx_domains, range_events, ranges, launches, kernels, gpus
-- Normalized views over the raw_* views that pipeline/trace.py maps from the export.
-- Units in names; ids decoded per docs/figures.md §2:
--   pid = (globalTid >> 24) & 0xFFFFFF, tid = globalTid & 0xFFFFFF,
--   process key global_pid = globalTid & ~0xFFFFFF (equals the kernel's globalPid).

CREATE OR REPLACE TEMP VIEW nvtx_domains AS
SELECT DISTINCT
    n.globalTid & ~CAST(16777215 AS BIGINT) AS global_pid,
    n.domainId AS domain_id,
    coalesce(n.text, s.value) AS domain
FROM raw_nvtx AS n
LEFT JOIN raw_strings AS s ON s.id = n.textId
WHERE n.eventType = 75;

-- NVTX range events: push/pop (59), start/end (60), NVTXT imports (70, 71), closed or not
-- (end NULL: a push never popped, e.g. the capture ended inside it). Marks are not ranges.
CREATE OR REPLACE TEMP VIEW range_events AS
SELECT
    n.start AS start_ns,
    n."end" AS end_ns,
    n.globalTid AS global_tid,
    n.globalTid & ~CAST(16777215 AS BIGINT) AS global_pid,
    (n.globalTid >> 24) & 16777215 AS pid,
    n.globalTid & 16777215 AS tid,
    coalesce(n.text, s.value) AS name,
    d.domain AS domain,
    n.domainId AS domain_id
FROM raw_nvtx AS n
LEFT JOIN raw_strings AS s ON s.id = n.textId
LEFT JOIN nvtx_domains AS d
       ON d.domain_id = n.domainId
      AND d.global_pid = n.globalTid & ~CAST(16777215 AS BIGINT)
WHERE n.eventType IN (59, 60, 70, 71);

-- NVTX ranges: the closed ones; region_ranges.sql reports the unclosed ones that match the region.
CREATE OR REPLACE TEMP VIEW ranges AS
SELECT * FROM range_events WHERE end_ns IS NOT NULL;

CREATE OR REPLACE TEMP VIEW launches AS
SELECT
    r.start AS start_ns,
    r."end" AS end_ns,
    r.globalTid AS global_tid,
    r.globalTid & ~CAST(16777215 AS BIGINT) AS global_pid,
    r.correlationId AS correlation_id
FROM raw_runtime AS r;

-- GPU work: kernel rows, plus one row per CUDA graph launch recorded at graph level
-- (--cuda-graph-trace=graph: CUPTI_ACTIVITY_KIND_GRAPH_TRACE, the graph's kernels are then
-- absent from the kernel table). Such a row is one opaque interval from the graph's first
-- node to its last, with graph_id set and no name; it is attributed through its
-- cudaGraphLaunch row like a kernel (docs/figures.md §4). Kernels captured at node level
-- (--cuda-graph-trace=node) are ordinary kernel rows: graph_id stays NULL for them.
-- name_id: the short name (demangled when absent), which classes match; detail_id: the
-- demangled name, whose template arguments may say the data type (precision, classify.sql).
-- node_graph_id: the graph a kernel captured at node level belongs to (graphIds are per process), for
-- `mfu inspect` (inspect_graphs.sql); a query that does not name it never reads it.
CREATE OR REPLACE TEMP VIEW kernels AS
SELECT
    k.start AS start_ns,
    k."end" AS end_ns,
    k.deviceId AS device_id,
    k.streamId AS stream_id,
    k.correlationId AS correlation_id,
    k.globalPid AS global_pid,
    coalesce(k.shortName, k.demangledName) AS name_id,
    k.demangledName AS detail_id,
    CAST(NULL AS BIGINT) AS graph_id,
    k.graphId AS node_graph_id
FROM raw_kernel AS k
UNION ALL
SELECT g.start, g."end", g.deviceId, g.streamId, g.correlationId, g.globalPid, NULL, NULL, g.graphId, NULL
FROM raw_graph_trace AS g;

CREATE OR REPLACE TEMP VIEW gpus AS
SELECT
    g.id AS device_id,
    g.name AS name,
    g.chipName AS chip_name,
    g.totalMemory AS memory_bytes,
    g.memoryBandwidth AS bandwidth_bytes_per_s,
    g.smCount AS sm_count,
    g.clockRate AS clock_hz,
    g.cuDevice AS cuda_device
FROM raw_gpu AS g;
