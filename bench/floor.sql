-- (a) The floor: read only the kernel table, join it to the runtime table by correlationId
-- (within the process, as any correct attribution must) and sum the kernel durations.
SELECT count(*) AS kernels, sum(k."end" - k.start) AS kernel_sum_ns
FROM nsys.CUPTI_ACTIVITY_KIND_KERNEL AS k
JOIN nsys.CUPTI_ACTIVITY_KIND_RUNTIME AS r
  ON k.correlationId = r.correlationId
 AND k.globalPid = (r.globalTid & ~CAST(16777215 AS BIGINT))
