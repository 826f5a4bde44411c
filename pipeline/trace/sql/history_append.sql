-- reads: -
-- creates: history
-- Append one job's row of one run to the history (a DuckDB table, format 4). $run numbers runs in
-- order; no wall-clock time is stored, so reports rendered from the history are reproducible. Format 2
-- adds the run's label and the per-occurrence samples the change detection tests, and marks each row
-- with the format it was written in (history_migrate.sql brings a format-1 table to these columns).
-- mfu_pct_wall_min is the job's MFU threshold (NULL when unset), so history charts can draw it; a
-- nullable column added within format 2 (history_migrate.sql adds it to older format-2 tables).
-- Format 3 adds comparability_inputs: the inputs `mfu compare` decides comparability on (compare.INPUTS:
-- FLOPs convention, precision, peak, occurrence scope, attribution, model FLOPs and tokens per step, GPU
-- count and type, occurrences) as a JSON object by input name, null for an input the result does not know.
-- Format 4 adds the rows of jobs that failed without a result (status 'failed'): exit_code and error (the
-- message's first line) are set for them only; their figures, samples and inputs are NULL, and so is a
-- hash that was not known (a job file that could not be read, a trace that could not be opened).
-- what_ran (a nullable column added within format 4, NULL before it and for failed jobs) is the JSON of what
-- `mfu history` decomposes a flagged step-time change from (changes.decompose, docs/compare.md): the run's
-- step_parts, top and unclassified kernels, devices, slowest rank and occurrence count.
CREATE TABLE IF NOT EXISTS history (
    run INTEGER, job VARCHAR, config_sha256 VARCHAR, trace_sha256 VARCHAR, status VARCHAR,
    mfu_pct_wall DOUBLE, hfu_pct_wall DOUBLE, step_time_median_s DOUBLE, tokens_per_s DOUBLE,
    straggler_s DOUBLE, label VARCHAR, samples_field VARCHAR, step_samples_s DOUBLE[],
    mfu_samples_pct DOUBLE[], format_version INTEGER, mfu_pct_wall_min DOUBLE,
    comparability_inputs VARCHAR, exit_code INTEGER, error VARCHAR, what_ran VARCHAR);
INSERT INTO history (run, job, config_sha256, trace_sha256, status, mfu_pct_wall, hfu_pct_wall,
                     step_time_median_s, tokens_per_s, straggler_s, label, samples_field, step_samples_s,
                     mfu_samples_pct, format_version, mfu_pct_wall_min, comparability_inputs, exit_code, error,
                     what_ran)
VALUES ($run, $job, $config_sha256, $trace_sha256, $status, $mfu_pct_wall, $hfu_pct_wall, $step_time_median_s,
        $tokens_per_s, $straggler_s, $label, $samples_field, $step_samples_s::DOUBLE[], $mfu_samples_pct::DOUBLE[],
        $format_version, $mfu_pct_wall_min, $comparability_inputs, $exit_code, $error, $what_ran);
