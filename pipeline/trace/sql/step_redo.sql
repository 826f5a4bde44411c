-- reads: classified, occurrence_times, shared_step_times, shared_step_spills
-- creates: step_targets, step_redo_rows, step_rows
-- A job's steps on a window shared by several jobs (step_share.sql): which it must cut itself (step_targets),
-- and the rows that takes (step_redo_rows, copied: few; step_rows, the view step_unions.sql reads, as
-- step_rows.sql makes it). A step of the job's comes out of the whole window
-- the same when it is the same interval and every row clipped into it there is one the job clips into it too:
--   changed   the job's occurrences whose step differs from the window's (occurrence_times.sql: the
--             job's last one, whose step is its wall when the window's next occurrence cut it short)
--   foreign   a spilled row (shared_step_spills) of an occurrence the job does not select, or of a
--             changed one (its own step's end moved, so where it spills to may differ)
--   targets   the changed occurrences and those a foreign row ran into in the window (it starts no
--             earlier than the row's step end and before the row's end, as step_unions.sql clips)
-- Every other step's unions are the window's (step_merge.sql). The rows: all of the targets' own, and the
-- spilled rows of the job's other occurrences (their steps are the window's, so the same rows spill): with
-- those, step_unions.sql gives each target every row the job's own window clips into it.
CREATE OR REPLACE TEMP TABLE step_targets AS
WITH changed AS (
    SELECT o.occurrence
    FROM occurrence_times AS o
    LEFT JOIN shared_step_times AS s ON s.occurrence = o.occurrence
    WHERE s.step_ns IS DISTINCT FROM o.step_ns OR s.start_ns IS DISTINCT FROM o.start_ns
),
foreign_rows AS (
    SELECT r.occurrence, r.step_end_ns, r.end_ns
    FROM shared_step_spills AS r
    WHERE r.occurrence NOT IN (SELECT occurrence FROM occurrence_times)
       OR r.occurrence IN (SELECT occurrence FROM changed)
)
SELECT occurrence FROM changed
UNION
SELECT o.occurrence
FROM occurrence_times AS o
JOIN foreign_rows AS r ON r.occurrence <> o.occurrence AND o.start_ns >= r.step_end_ns AND o.start_ns < r.end_ns;

CREATE OR REPLACE TEMP TABLE step_redo_rows AS
SELECT occurrence, name_id, start_ns, end_ns
FROM classified
WHERE occurrence IN (SELECT occurrence FROM step_targets)
UNION ALL
SELECT occurrence, name_id, start_ns, end_ns
FROM shared_step_spills
WHERE occurrence IN (SELECT occurrence FROM occurrence_times) AND occurrence NOT IN (SELECT occurrence FROM step_targets);

CREATE OR REPLACE TEMP VIEW step_rows AS
SELECT * FROM step_redo_rows;
