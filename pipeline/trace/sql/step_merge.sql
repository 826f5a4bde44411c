-- reads: step_unions, step_targets, shared_step_unions, occurrence_times
-- creates: -
-- A job's step_unions on a window shared by several jobs: the steps it cut itself (step_redo.sql: step_unions.sql
-- over the targets' rows, which also clipped the few spilled rows of its other occurrences into their own steps,
-- partly: those rows go) and, for every other occurrence of the job, the whole window's (step_share.sql), which
-- are the same rows. Then step_parts.sql reads them as it reads a job's own.
DELETE FROM step_unions
WHERE k1 NOT IN (SELECT occurrence FROM step_targets);

INSERT INTO step_unions BY NAME
SELECT *
FROM shared_step_unions
WHERE k1 IN (SELECT occurrence FROM occurrence_times) AND k1 NOT IN (SELECT occurrence FROM step_targets);
