-- (b) The reads a cold job cannot avoid, without any join: every row of the kernel table with the
-- columns the window keeps (the kernels view, views.sql) and every row of the runtime table with the
-- columns the attribution tests (attribute_launch.sql). Each column is summed so the scanner fetches it.
SELECT
    (SELECT count(*) + sum(start) + sum("end") + sum(deviceId) + sum(correlationId) + sum(globalPid)
            + sum(shortName) + sum(coalesce(demangledName, 0))
     FROM nsys.CUPTI_ACTIVITY_KIND_KERNEL) AS kernel_checksum,
    (SELECT count(*) + sum(start) + sum(globalTid) + sum(correlationId)
     FROM nsys.CUPTI_ACTIVITY_KIND_RUNTIME) AS runtime_checksum
