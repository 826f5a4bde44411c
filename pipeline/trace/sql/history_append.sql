-- reads: -
-- creates: history
-- Append one run's result rows to the history (a DuckDB table). $run numbers runs in
-- order; no wall-clock time is stored, so reports rendered from the history are reproducible.
CREATE TABLE IF NOT EXISTS history (
    run INTEGER, job VARCHAR, config_sha256 VARCHAR, trace_sha256 VARCHAR, status VARCHAR,
    mfu_pct_wall DOUBLE, hfu_pct_wall DOUBLE, step_time_median_s DOUBLE, tokens_per_s DOUBLE,
    straggler_s DOUBLE);
INSERT INTO history VALUES ($run, $job, $config_sha256, $trace_sha256, $status, $mfu_pct_wall,
                            $hfu_pct_wall, $step_time_median_s, $tokens_per_s, $straggler_s);
