-- reads: operator_ranges, label_spans
-- creates: -
-- Per file of several built as one (merge_files.sql: the file in bits 48+ of a thread key), whether its own
-- window would place kernels in operators and parts of the step, as measure.build_window decides from
-- operator_ranges.sql's last row: an operator range, or a named range besides the region's. merged.py builds as
-- one only files that all decide alike: a file that places none has no counted-FLOPs rows of its own.
SELECT file, operators > 0 OR labels > 1 AS place
FROM (
    SELECT file, sum(operator) AS operators, count(DISTINCT label) AS labels
    FROM (SELECT global_tid >> 48 AS file, 1 AS operator, CAST(NULL AS VARCHAR) AS label FROM operator_ranges
          UNION ALL
          SELECT global_tid >> 48, 0, label FROM label_spans)
    GROUP BY file
)
ORDER BY file
