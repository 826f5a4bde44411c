-- reads: operator_ranges, label_spans
-- creates: -
-- Per file of several built as one (merge_files.sql: the file in bits 48+ of a thread key), the two counts
-- operator_ranges.sql's last row gives a window: its operator ranges and its distinct labels. measure.places
-- decides from them whether each file's own window would place kernels in operators and parts of the step;
-- merged.py builds as one only files that all decide alike (a file that places none has no counted-FLOPs rows).
SELECT file, sum(operator) AS operators, count(DISTINCT label) AS labels
FROM (SELECT global_tid >> 48 AS file, 1 AS operator, CAST(NULL AS VARCHAR) AS label FROM operator_ranges
      UNION ALL
      SELECT global_tid >> 48, 0, label FROM label_spans)
GROUP BY file
ORDER BY file
