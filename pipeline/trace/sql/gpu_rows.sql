-- reads: gpus
-- creates: -
-- The GPU table as detection needs it (TARGET_INFO_GPU; every GPU of the node, used or not).
-- cuDevice: the CUDA device number the capture saw (what a program calls cuda:N), which need not be
-- the id kernels name their device by (NSYS_SCHEMA: deviceId = TARGET_INFO_GPU.id).
SELECT device_id AS id, name, chip_name AS "chipName", memory_bytes AS "totalMemory",
       bandwidth_bytes_per_s AS "memoryBandwidth", sm_count AS "smCount", clock_hz AS "clockRate",
       cuda_device AS "cuDevice"
FROM gpus
ORDER BY device_id;
