-- reads: classified
-- creates: -
-- Device ids that ran kernels of processes on more than one host (VM id, bits 48+ of the process
-- key) in one file: device ids are per host, so the per-device figures of such an id add up the
-- devices of several hosts. Run only when select_occurrences.sql counted several hosts; over the
-- occurrences a job analyses (measure.analyse), since a shared window holds other jobs' too.
SELECT device_id, count(DISTINCT global_pid >> 48) AS hosts
FROM classified
WHERE device_id IS NOT NULL
GROUP BY device_id
HAVING count(DISTINCT global_pid >> 48) > 1
ORDER BY device_id;
