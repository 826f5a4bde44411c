-- reads: classified
-- creates: step_rows
-- The rows step_unions.sql cuts each step from: every classified kernel and memory operation of the window
-- (a view: nothing copied). A job analysing a window shared by several jobs (analysis/sharing.py) gives it
-- only the rows of the few steps it cannot take from the shared window instead (step_redo.sql).
CREATE OR REPLACE TEMP VIEW step_rows AS
SELECT occurrence, name_id, start_ns, end_ns
FROM classified;
