-- reads: shared_ranges, shared_classified, shared_name_times, shared_operator_work, shared_step_unions, shared_step_times, shared_step_spills, shared_occurrence_times, shared_places
-- creates: -
-- End a shared window (window_share.sql, step_share.sql): its views, tables, bounds and placement (window_cut.sql)
-- go, and the tables its jobs' steps were cut with (step_redo.sql), so the next job on the connection builds its
-- own window tables under the usual names.
DROP VIEW IF EXISTS selected_ranges;
DROP VIEW IF EXISTS classified;
DROP VIEW IF EXISTS name_times;
DROP VIEW IF EXISTS operator_work;
DROP TABLE IF EXISTS shared_ranges;
DROP TABLE IF EXISTS shared_classified;
DROP TABLE IF EXISTS shared_name_times;
DROP TABLE IF EXISTS shared_operator_work;
DROP TABLE IF EXISTS shared_step_unions;
DROP TABLE IF EXISTS shared_step_times;
DROP TABLE IF EXISTS shared_step_spills;
DROP TABLE IF EXISTS shared_occurrence_times;
DROP TABLE IF EXISTS shared_places;
DROP VIEW IF EXISTS step_rows;
DROP TABLE IF EXISTS step_redo_rows;
DROP TABLE IF EXISTS step_targets;
RESET VARIABLE first_occurrence;
RESET VARIABLE last_occurrence;
RESET VARIABLE place_operators;
