-- reads: shared_ranges, shared_classified, shared_name_times, shared_operator_work
-- creates: selected_ranges, classified, name_times, operator_work
-- One job's window out of a window built for several jobs (window_share.sql): views of the rows
-- of occurrences $first..$last of the three tables the analyses read (views, not copies: a copy
-- of a 0.8 M-kernel window costs more than the few filtered scans the analyses make). The bounds
-- are session variables, which DuckDB folds into constants when it binds a query reading a view:
-- each scan filters its rows itself (a bounds table would be joined to every row instead). An
-- occurrence's rows do not depend on which other occurrences were selected
-- (tests/test_shared_window.py), so these are the rows the job's own window holds. `unlaunched`
-- is not cut: whether a kernel was launched by a selected launch depends on the selection; its
-- one reader, unattributed.sql, ran on the shared window, its rows kept per occurrence
-- (measure.Window.unattributed). Nor is whether kernels are placed in operators (measure.places): the
-- window decides it over every job's occurrences, a job's own window over its own; $place is the job's
-- (SharedWindow.cut), and where it is false the job's operator_work is empty, as operator_work.sql leaves it.
SET VARIABLE first_occurrence = $first;
SET VARIABLE last_occurrence = $last;
SET VARIABLE place_operators = $place;
CREATE OR REPLACE TEMP VIEW selected_ranges AS
SELECT * FROM shared_ranges
WHERE occurrence BETWEEN getvariable('first_occurrence') AND getvariable('last_occurrence');
CREATE OR REPLACE TEMP VIEW classified AS
SELECT * FROM shared_classified
WHERE occurrence BETWEEN getvariable('first_occurrence') AND getvariable('last_occurrence');
CREATE OR REPLACE TEMP VIEW name_times AS
SELECT * FROM shared_name_times
WHERE occurrence BETWEEN getvariable('first_occurrence') AND getvariable('last_occurrence');
CREATE OR REPLACE TEMP VIEW operator_work AS
SELECT * FROM shared_operator_work
WHERE getvariable('place_operators')
  AND occurrence BETWEEN getvariable('first_occurrence') AND getvariable('last_occurrence');
