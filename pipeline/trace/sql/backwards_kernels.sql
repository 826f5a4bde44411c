-- reads: classified
-- creates: -
-- Attributed rows (kernels, memory operations) that end before they start, per occurrence: a
-- time interval of negative length, which no GPU ran (a broken clock, or an edited or damaged
-- export). The union counts such a row as no time (trace/unions.py); sums of durations would
-- count it as negative time. The run warns rather than print figures resting on them as plain.
SELECT occurrence, count(*) AS rows, CAST(sum(start_ns - end_ns) AS BIGINT) AS negative_ns
FROM classified
WHERE end_ns < start_ns
GROUP BY occurrence
ORDER BY occurrence;
