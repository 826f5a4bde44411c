-- reads: gpus
-- creates: -
-- gpu_rows.sql for every file of several built as one (merge_files.sql), with each row's file and its own
-- device id: merged.py hands each file its rows, as gpu_rows.sql gives them on that file alone.
SELECT CAST(device_id >> 32 AS INTEGER) AS file, device_id & 4294967295 AS id, name, chip_name AS "chipName",
       memory_bytes AS "totalMemory", bandwidth_bytes_per_s AS "memoryBandwidth", sm_count AS "smCount",
       clock_hz AS "clockRate", cuda_device AS "cuDevice"
FROM gpus
ORDER BY device_id;
