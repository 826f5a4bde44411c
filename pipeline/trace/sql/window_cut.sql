-- reads: shared_ranges, shared_classified, shared_name_times, window_bounds
-- creates: selected_ranges, classified, name_times
-- One job's window out of a window built for several jobs (window_share.sql): views of the rows
-- of occurrences $first..$last of the three tables the analyses read (views, not copies: a copy
-- of a 0.8 M-kernel window costs more than the few filtered scans the analyses make). An
-- occurrence's rows do not depend on which other occurrences were selected
-- (tests/test_shared_window.py), so these are the rows the job's own window holds. `unlaunched`
-- is not cut: whether a kernel was launched by a selected launch depends on the selection; its
-- one reader, unattributed.sql, ran on the shared window, its rows kept per occurrence
-- (measure.Window.unattributed).
DELETE FROM window_bounds;
INSERT INTO window_bounds VALUES ($first, $last);
CREATE OR REPLACE TEMP VIEW selected_ranges AS
SELECT * FROM shared_ranges
WHERE occurrence BETWEEN (SELECT first_occurrence FROM window_bounds) AND (SELECT last_occurrence FROM window_bounds);
CREATE OR REPLACE TEMP VIEW classified AS
SELECT * FROM shared_classified
WHERE occurrence BETWEEN (SELECT first_occurrence FROM window_bounds) AND (SELECT last_occurrence FROM window_bounds);
CREATE OR REPLACE TEMP VIEW name_times AS
SELECT * FROM shared_name_times
WHERE occurrence BETWEEN (SELECT first_occurrence FROM window_bounds) AND (SELECT last_occurrence FROM window_bounds);
