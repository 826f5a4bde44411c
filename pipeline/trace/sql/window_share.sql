-- reads: selected_ranges, classified, name_times, operator_work
-- creates: shared_ranges, shared_classified, shared_name_times, shared_operator_work
-- A window built once for several jobs of a batch (analysis/sharing.py) keeps its tables under
-- these names (renaming copies nothing); window_cut.sql then shows each job the rows of its own
-- occurrences under the names the analyses read, and window_unshare.sql ends the sharing.
DROP TABLE IF EXISTS shared_ranges;
DROP TABLE IF EXISTS shared_classified;
DROP TABLE IF EXISTS shared_name_times;
ALTER TABLE selected_ranges RENAME TO shared_ranges;
ALTER TABLE classified RENAME TO shared_classified;
ALTER TABLE name_times RENAME TO shared_name_times;
DROP TABLE IF EXISTS shared_operator_work;
ALTER TABLE operator_work RENAME TO shared_operator_work;
