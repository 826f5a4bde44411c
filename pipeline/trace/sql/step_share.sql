-- reads: step_unions, occurrence_times, classified
-- creates: shared_step_unions, shared_step_times, shared_step_spills, shared_occurrence_times
-- A window built for several jobs (analysis/sharing.py) cuts the steps of all its occurrences once
-- (step_unions.sql over the whole window, its occurrence_times.sql), and keeps what a job needs to tell
-- which of its own steps come out the same (step_redo.sql):
--   shared_step_unions   step_unions.sql's rows for every occurrence of the window
--   shared_step_times    each occurrence's step as the window has it (start_ns, step_ns)
--   shared_step_spills   the rows running past their own step's end (step_end_ns), the only ones clipped into
--                        another occurrence's step: few, so a job finds among them the steps other
--                        occurrences than its own ran into, and the rows its own occurrences spill
-- and its occurrence_times.sql rows, whose per-occurrence figures are every job's (occurrence_cut.sql).
CREATE OR REPLACE TEMP TABLE shared_occurrence_times AS
SELECT *
FROM occurrence_times;

CREATE OR REPLACE TEMP TABLE shared_step_times AS
SELECT occurrence, start_ns, step_ns
FROM occurrence_times;

CREATE OR REPLACE TEMP TABLE shared_step_spills AS
SELECT c.occurrence, c.name_id, c.start_ns, c.end_ns, o.start_ns + o.step_ns AS step_end_ns
FROM classified AS c
JOIN occurrence_times AS o ON o.occurrence = c.occurrence AND c.end_ns > o.start_ns + o.step_ns;

DROP TABLE IF EXISTS shared_step_unions;
ALTER TABLE step_unions RENAME TO shared_step_unions;
