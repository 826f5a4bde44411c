-- reads: selected_ranges, classified, name_times, operator_work, occurrence_places
-- creates: shared_ranges, shared_classified, shared_name_times, shared_operator_work, shared_places
-- A window built once for several jobs of a batch (analysis/sharing.py) keeps its tables under
-- these names (renaming copies nothing); window_cut.sql then shows each job the rows of its own
-- occurrences under the names the analyses read, and window_unshare.sql ends the sharing. Its rows: each
-- occurrence's counts deciding whether kernels are placed in operators (operator_ranges.sql occurrence_places),
-- from which SharedWindow.cut decides it for each job as the job's own window would.
DROP TABLE IF EXISTS shared_ranges;
DROP TABLE IF EXISTS shared_classified;
DROP TABLE IF EXISTS shared_name_times;
ALTER TABLE selected_ranges RENAME TO shared_ranges;
ALTER TABLE classified RENAME TO shared_classified;
ALTER TABLE name_times RENAME TO shared_name_times;
DROP TABLE IF EXISTS shared_operator_work;
ALTER TABLE operator_work RENAME TO shared_operator_work;
DROP TABLE IF EXISTS shared_places;
ALTER TABLE occurrence_places RENAME TO shared_places;

SELECT occurrence, operators, labels
FROM shared_places
ORDER BY occurrence;
