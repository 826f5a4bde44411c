-- reads: raw_nvtx__all, raw_runtime__all, raw_kernel__all, raw_graph_trace__all, raw_memcpy__all, raw_memset__all, raw_processes__all, raw_gpu__all, raw_strings__all
-- creates: merged_nvtx, merged_runtime, merged_kernel, merged_graph_trace, merged_memcpy, merged_memset, merged_processes, merged_gpu, merged_strings, raw_nvtx, raw_runtime, raw_kernel, raw_graph_trace, raw_memcpy, raw_memset, raw_processes, raw_gpu, raw_strings
-- Several small trace files as one trace with many processes (analysis/merged.py, issue 34): every file's raw
-- rows, in one table per raw view (raw_*__all, its index in `file`), seen with its ids made unique by that index
-- in bits no id of its uses (merge_keys.sql checked): process keys in bits 48+ (the host's place), device ids in
-- bits 32+, string ids in bits 40+. Times, correlation ids (matched within a process), stream and graph ids
-- (within a device or process) stay as they are. The raw_* views then read these, so the window's SQL runs once
-- for all the files; merge_split.sql gives each row its file and its own ids back. Views, not copies: the few
-- reads of each by the window cost less than copying every row once more (64 files of 12,500 kernels: the copy
-- was 0.25 CPU s).
CREATE OR REPLACE TEMP VIEW merged_strings AS
SELECT id + (CAST(file AS BIGINT) << 40) AS id, value FROM raw_strings__all;
CREATE OR REPLACE TEMP VIEW merged_nvtx AS
SELECT start, "end", eventType, text, textId + (CAST(file AS BIGINT) << 40) AS textId,
       (globalTid & 281474976710655) | (CAST(file AS BIGINT) << 48) AS globalTid, domainId, jsonText
FROM raw_nvtx__all;
CREATE OR REPLACE TEMP VIEW merged_runtime AS
SELECT start, "end", (globalTid & 281474976710655) | (CAST(file AS BIGINT) << 48) AS globalTid, correlationId,
       nameId + (CAST(file AS BIGINT) << 40) AS nameId
FROM raw_runtime__all;
CREATE OR REPLACE TEMP VIEW merged_kernel AS
SELECT start, "end", deviceId + (CAST(file AS BIGINT) << 32) AS deviceId, streamId, correlationId,
       (globalPid & 281474976710655) | (CAST(file AS BIGINT) << 48) AS globalPid,
       shortName + (CAST(file AS BIGINT) << 40) AS shortName, demangledName + (CAST(file AS BIGINT) << 40) AS demangledName,
       graphId, graphNodeId
FROM raw_kernel__all;
CREATE OR REPLACE TEMP VIEW merged_graph_trace AS
SELECT start, "end", deviceId + (CAST(file AS BIGINT) << 32) AS deviceId, streamId, correlationId,
       (globalPid & 281474976710655) | (CAST(file AS BIGINT) << 48) AS globalPid, graphId, graphExecId
FROM raw_graph_trace__all;
CREATE OR REPLACE TEMP VIEW merged_memcpy AS
SELECT start, "end", deviceId + (CAST(file AS BIGINT) << 32) AS deviceId, streamId, correlationId,
       (globalPid & 281474976710655) | (CAST(file AS BIGINT) << 48) AS globalPid, bytes
FROM raw_memcpy__all;
CREATE OR REPLACE TEMP VIEW merged_memset AS
SELECT start, "end", deviceId + (CAST(file AS BIGINT) << 32) AS deviceId, streamId, correlationId,
       (globalPid & 281474976710655) | (CAST(file AS BIGINT) << 48) AS globalPid, bytes
FROM raw_memset__all;
CREATE OR REPLACE TEMP VIEW merged_processes AS
SELECT (globalPid & 281474976710655) | (CAST(file AS BIGINT) << 48) AS globalPid, pid, name
FROM raw_processes__all;
CREATE OR REPLACE TEMP VIEW merged_gpu AS
SELECT id + (CAST(file AS BIGINT) << 32) AS id, name, chipName, totalMemory, memoryBandwidth, smCount, clockRate,
       cuDevice
FROM raw_gpu__all;
CREATE OR REPLACE TEMP VIEW raw_strings AS SELECT * FROM merged_strings;
CREATE OR REPLACE TEMP VIEW raw_nvtx AS SELECT * FROM merged_nvtx;
CREATE OR REPLACE TEMP VIEW raw_runtime AS SELECT * FROM merged_runtime;
CREATE OR REPLACE TEMP VIEW raw_kernel AS SELECT * FROM merged_kernel;
CREATE OR REPLACE TEMP VIEW raw_graph_trace AS SELECT * FROM merged_graph_trace;
CREATE OR REPLACE TEMP VIEW raw_memcpy AS SELECT * FROM merged_memcpy;
CREATE OR REPLACE TEMP VIEW raw_memset AS SELECT * FROM merged_memset;
CREATE OR REPLACE TEMP VIEW raw_processes AS SELECT * FROM merged_processes;
CREATE OR REPLACE TEMP VIEW raw_gpu AS SELECT * FROM merged_gpu
