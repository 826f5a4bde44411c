-- reads: gpus
-- creates: -
-- The GPU table as detection needs it (TARGET_INFO_GPU; every GPU of the node, used or not).
SELECT device_id AS id, name, chip_name AS "chipName", memory_bytes AS "totalMemory",
       bandwidth_bytes_per_s AS "memoryBandwidth", sm_count AS "smCount", clock_hz AS "clockRate"
FROM gpus
ORDER BY device_id;
